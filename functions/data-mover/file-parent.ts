/**
 * File mode incrementals: the parent manifest's root tree (a full read once the parent is gone),
 * and the parent snapshot's entries, directory by directory, so a file whose size, mtime and ctime
 * are unchanged takes its pieces from there unread. Reuse is safe only for blobs the current
 * writer sees stored (its lease then keeps garbage collection off them).
 */
import { BlobMissing, LifeboatError, SnapshotManifestMissing } from '../../shared/domain/errors.js';
import {
  CONTENT_LIST_FORMAT,
  type FileEntry,
  type FileTreeEntry,
  parseFileTreeBlob,
  type RawName,
  rawNameBytes,
  TREE_FORMAT,
} from '../../shared/domain/files/tree.js';
import type { BlobId, Repository, RepositoryWriter } from '../../shared/ports/repository.js';
import { TreeBlobsAhead } from './file-tree-ahead.js';

/**
 * The parent manifest's root tree; none when the parent is gone (deleted by `backup delete` and
 * garbage collection since the job was planned): then everything is read.
 */
export async function parentRootOf(options: {
  repository: Pick<Repository, 'readManifest'>;
  parentId: string;
  signal?: AbortSignal;
}): Promise<{ readonly root: BlobId; readonly totalBytes: number } | undefined> {
  const { parentId, signal } = options;
  const parent = await options.repository
    .readManifest(parentId, signal ? { signal } : {})
    .catch((error: unknown) => {
      if (error instanceof SnapshotManifestMissing) return undefined;
      throw error;
    });
  if (parent && parent.kind !== 'file')
    throw new LifeboatError(`parent manifest ${parentId} is a ${parent.kind} snapshot, not a file one`);
  return parent?.kind === 'file' ? { root: parent.root, totalBytes: parent.stats.totalBytes } : undefined;
}

/** A name as a map key: its bytes, one char each. */
export const nameKey = (name: RawName): string => Buffer.from(rawNameBytes(name)).toString('latin1');

export class ParentSnapshot {
  private readonly trees: TreeBlobsAhead;

  constructor(
    private readonly options: {
      repository: Pick<Repository, 'getBlob' | 'forEachBlob'>;
      writer: RepositoryWriter;
      signal?: AbortSignal;
    },
  ) {
    this.trees = new TreeBlobsAhead(options);
  }

  /** Reads the parent's tree blobs ahead, by pack: an unchanged tree then costs a few reads. */
  prefetch(root: BlobId): Promise<void> {
    return this.trees.prefetch(root);
  }

  private blob(id: BlobId): Promise<Uint8Array> {
    return this.trees.get(id);
  }

  /** A directory's entries in the parent (all its pages), by name key; none when a page is gone. */
  async entries(tree: BlobId): Promise<Map<string, FileTreeEntry>> {
    try {
      return await this.pagesOf(tree);
    } catch (error) {
      // Collected since the parent manifest was read (it was deleted): this directory is read anew.
      if (error instanceof BlobMissing) return new Map();
      throw error;
    }
  }

  private async pagesOf(tree: BlobId): Promise<Map<string, FileTreeEntry>> {
    const byName = new Map<string, FileTreeEntry>();
    const pages: BlobId[] = [tree];
    for (let i = 0; i < pages.length; i++) {
      const id = pages[i] as BlobId;
      const page = parseFileTreeBlob(await this.blob(id), id);
      if (page.format !== TREE_FORMAT) throw new LifeboatError(`parent tree blob ${id} is not a tree`);
      if (i === 0) pages.push(...(page.more ?? []));
      for (const entry of page.entries) byName.set(nameKey(entry.name), entry);
    }
    return byName;
  }

  /** Whether every blob of a parent's file entry is still stored as the writer sees it. */
  async stillStored(entry: FileEntry): Promise<boolean> {
    const { writer } = this.options;
    const lists = entry.contentLists ?? [];
    if (!lists.every((id) => writer.has(id))) return false;
    for (const list of lists) {
      const data = await this.blob(list).catch((error: unknown) => {
        if (error instanceof BlobMissing) return undefined;
        throw error;
      });
      if (!data) return false;
      const parsed = parseFileTreeBlob(data, list);
      if (parsed.format !== CONTENT_LIST_FORMAT) return false;
      if (!parsed.pieces.every((p) => writer.has(p[2]))) return false;
    }
    return (entry.content ?? []).every((p) => writer.has(p[2]));
  }
}
