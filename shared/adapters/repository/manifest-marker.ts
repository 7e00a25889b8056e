/**
 * Garbage collection's mark phase (docs/repository-format.md, "Garbage collection"): every blob a
 * manifest reaches marked live in the inventory's bitmap, block maps and what they list, file trees
 * through file mode's own reader, each tree read once.
 * Never: a manifest's blob left unmarked (one the inventory lacks is recorded as missing), a
 * manifest deleted meanwhile counted as live.
 */
import { fileTreeChildren } from '../../domain/files/tree.js';
import { parseBlockMapChunk } from '../../domain/repository/block-map.js';
import type { BlobMarks } from '../../domain/repository/gc.js';
import type { BlobId, SnapshotManifest } from '../../ports/repository.js';
import { mapBounded } from './bounded.js';

const READ_CONCURRENCY = 8;

/**
 * File mode's tree format, owned by file mode (shared/domain/files/tree.ts, fileTreeChildren): the
 * blobs one tree blob names, `nested` ones of the same format (read and followed) and `data`.
 */
export type TreeReferences = (tree: Uint8Array) => {
  readonly nested: readonly BlobId[];
  readonly data: readonly BlobId[];
};

/** Marks what manifests reach, in the inventory's bitmap; trees are read once each. */
export class Marker {
  private readonly read = new Set<string>();
  private readonly treesSeen = new Set<string>();
  manifests = 0;
  /** Blobs a manifest reaches that the inventory lacks (no existing pack holds them). */
  readonly missing = new Set<string>();

  constructor(
    private readonly marks: BlobMarks,
    private readonly options: {
      readManifest: (id: string, signal?: AbortSignal) => Promise<SnapshotManifest | undefined>;
      getBlob: (id: BlobId, signal?: AbortSignal) => Promise<Uint8Array>;
      fileTreeReferences?: TreeReferences;
      signal?: AbortSignal;
    },
  ) {}

  /** Marks the manifests not marked yet; a manifest deleted meanwhile is skipped. */
  async mark(ids: readonly string[]): Promise<void> {
    const fresh = ids.filter((id) => !this.read.has(id));
    await mapBounded(fresh, READ_CONCURRENCY, async (id) => {
      const manifest = await this.options.readManifest(id, this.options.signal);
      this.read.add(id);
      if (!manifest) return;
      this.manifests++;
      if (manifest.kind === 'block') await this.markBlock(manifest.blockMap);
      else await this.markTree(manifest.root);
    });
  }

  private async markBlock(blockMap: readonly BlobId[]): Promise<void> {
    await mapBounded(blockMap, READ_CONCURRENCY, async (mapId) => {
      // A block map shared with a manifest marked before (an unchanged range) is marked already.
      if (this.marks.isMarked(mapId)) return;
      this.markOne(mapId);
      const bytes = await this.options.getBlob(mapId, this.options.signal);
      for (const [, id] of parseBlockMapChunk(Buffer.from(bytes).toString('utf8'))) this.markOne(id);
    });
  }

  private markOne(id: BlobId): void {
    if (!this.marks.mark(id)) this.missing.add(id);
  }

  private async markTree(root: BlobId): Promise<void> {
    const references = this.options.fileTreeReferences ?? fileTreeChildren;
    const queue = [root];
    while (queue.length > 0) {
      const batch = queue.splice(0, READ_CONCURRENCY).filter((id) => !this.treesSeen.has(id));
      for (const id of batch) {
        this.treesSeen.add(id);
        this.markOne(id);
      }
      await mapBounded(batch, READ_CONCURRENCY, async (id) => {
        const refs = references(await this.options.getBlob(id, this.options.signal));
        for (const blob of refs.data) this.markOne(blob);
        for (const tree of refs.nested) if (!this.treesSeen.has(tree)) queue.push(tree);
      });
    }
  }
}
