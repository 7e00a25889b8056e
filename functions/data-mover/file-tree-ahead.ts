/**
 * File mode: a snapshot's tree blobs read ahead. A walk reads one directory's tree blob after
 * another, each a ranged read of its own (100 directories: 100 reads in turn, each a round trip);
 * read level by level through Repository.forEachBlob they come by pack, a few reads in all. Kopia
 * and restic keep such metadata in a local cache; a Fargate task starts with none.
 * Memory: at most PREFETCH_BYTES of tree blobs, each dropped once used; past it, the walk reads
 * what it reaches. Never: hand out a blob not checked (forEachBlob and getBlob check every one).
 */
import { BlobMissing } from '../../shared/domain/errors.js';
import { parseFileTreeBlob, TREE_FORMAT } from '../../shared/domain/files/tree.js';
import type { BlobId, Repository } from '../../shared/ports/repository.js';

/** Tree blobs read ahead, at most. */
const PREFETCH_BYTES = 64 * 1024 * 1024;

export class TreeBlobsAhead {
  private readonly ahead = new Map<BlobId, Uint8Array>();

  constructor(
    private readonly options: {
      readonly repository: Pick<Repository, 'getBlob' | 'forEachBlob'>;
      readonly signal?: AbortSignal;
    },
  ) {}

  /** Reads the tree under `root` ahead, level by level, until PREFETCH_BYTES. */
  async prefetch(root: BlobId): Promise<void> {
    const { signal } = this.options;
    let bytes = 0;
    for (let level: BlobId[] = [root]; level.length > 0 && bytes < PREFETCH_BYTES; ) {
      const next: BlobId[] = [];
      const read = this.options.repository.forEachBlob(
        level.filter((id) => !this.ahead.has(id)),
        async (id, data) => {
          bytes += data.length;
          this.ahead.set(id, data);
          const page = parseFileTreeBlob(data, id);
          if (page.format !== TREE_FORMAT) return;
          next.push(...(page.more ?? []));
          for (const entry of page.entries) if (entry.type === 'dir') next.push(entry.tree);
        },
        signal ? { signal } : {},
      );
      // A blob gone (its snapshot deleted meanwhile): the walk meets it and decides.
      const complete = await read.then(
        () => true,
        (error: unknown) => {
          if (error instanceof BlobMissing) return false;
          throw error;
        },
      );
      if (!complete) return;
      level = next;
    }
  }

  /** The blob, from what was read ahead (then dropped) or read now. */
  async get(id: BlobId): Promise<Uint8Array> {
    const read = this.ahead.get(id);
    if (read) {
      this.ahead.delete(id);
      return read;
    }
    const { signal } = this.options;
    return this.options.repository.getBlob(id, signal ? { signal } : {});
  }
}
