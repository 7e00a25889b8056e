/**
 * The block map of a block-mode backup as it is built, range by range in ascending order: the
 * ranges open while their blocks are read, the parent's ranges interleaved as they are (unchanged
 * ranges reuse the parent's chunk blob), and the chunks of the finished ranges. Memory stays
 * bounded: only the open ranges and one parent chunk are held.
 * Never writes a range's chunk before every block read for it has landed, nor out of order.
 */
import {
  type BlockChange,
  encodeBlockMapChunk,
  mergeBlockRange,
} from '../../shared/domain/repository/block-map.js';
import type { BlobId, RepositoryWriter } from '../../shared/ports/repository.js';
import { EBS_BLOCK_SIZE } from '../../shared/ports/snapshot-blocks.js';
import type { ParentChunk } from './block-sources.js';

const encoder = new TextEncoder();

/** A range of the map being built: the changes read so far and the reads still in flight. */
export interface OpenRange {
  readonly range: number;
  readonly parent?: ParentChunk;
  readonly changes: BlockChange[];
  pending: number;
  closed: boolean;
}

export class BlockMapRanges {
  private readonly open: OpenRange[] = [];
  private readonly parents: AsyncGenerator<ParentChunk> | undefined;
  private readonly writer: Pick<RepositoryWriter, 'putBlob'>;
  private readonly signal: AbortSignal;
  private nextParent: ParentChunk | undefined;
  /** Block-map chunk blobs of the finished ranges, ascending. */
  readonly chunks: BlobId[];
  totalBytes: number;
  /** Every range below this one is finished. */
  finishedRanges: number;

  constructor(options: {
    /** The parent's chunks from the first range this run builds on (an incremental), or none. */
    parents: AsyncGenerator<ParentChunk> | undefined;
    /** Where a changed range's chunk is stored, and the signal of its put (the run's pool's). */
    writer: Pick<RepositoryWriter, 'putBlob'>;
    signal: AbortSignal;
    /** What a checkpoint of an earlier run finished. */
    chunks: readonly BlobId[];
    totalBytes: number;
    startRange: number;
  }) {
    this.parents = options.parents;
    this.writer = options.writer;
    this.signal = options.signal;
    this.chunks = [...options.chunks];
    this.totalBytes = options.totalBytes;
    this.finishedRanges = options.startRange;
  }

  /** Reads the parent's first chunk. */
  async start(): Promise<void> {
    this.nextParent = this.parents ? (await this.parents.next()).value : undefined;
  }

  private async advanceParent(): Promise<void> {
    this.nextParent = this.parents ? (await this.parents.next()).value : undefined;
  }

  /** Adds the parent's next range as it is (closed: nothing of it is read). */
  private async keepParentRange(parent: ParentChunk): Promise<void> {
    this.open.push({ range: parent.range, parent, changes: [], pending: 0, closed: true });
    await this.advanceParent();
  }

  /** The open range for `range`, opening ranges the parent has before it as they are. */
  async rangeFor(range: number): Promise<OpenRange> {
    for (const r of this.open) if (r.range < range) r.closed = true;
    while (this.nextParent && this.nextParent.range < range) await this.keepParentRange(this.nextParent);
    const last = this.open.at(-1);
    if (last && last.range === range) return last;
    const here = this.nextParent?.range === range ? this.nextParent : undefined;
    if (here) await this.advanceParent();
    const opened: OpenRange = {
      range,
      ...(here ? { parent: here } : {}),
      changes: [],
      pending: 0,
      closed: false,
    };
    this.open.push(opened);
    return opened;
  }

  /** The listing is done: every range closes; the parent's ranges after the last change stay as they are. */
  async closeAll(): Promise<void> {
    for (const r of this.open) r.closed = true;
    while (this.nextParent) await this.keepParentRange(this.nextParent);
  }

  /** Writes the map chunks of finished ranges, in order; true if any range finished. */
  async finishReady(): Promise<boolean> {
    let finished = false;
    for (let head = this.open[0]; head?.closed && head.pending === 0; head = this.open[0]) {
      this.open.shift();
      const entries =
        head.changes.length === 0
          ? (head.parent?.entries ?? [])
          : mergeBlockRange({ parent: head.parent?.entries ?? [], changes: head.changes });
      if (entries.length > 0) {
        if (head.changes.length === 0 && head.parent) this.chunks.push(head.parent.blobId);
        else {
          const written = await this.writer.putBlob(encoder.encode(encodeBlockMapChunk(entries)), {
            signal: this.signal,
          });
          this.chunks.push(written.id);
        }
      }
      this.totalBytes += entries.length * EBS_BLOCK_SIZE;
      this.finishedRanges = head.range + 1;
      finished = true;
    }
    return finished;
  }
}
