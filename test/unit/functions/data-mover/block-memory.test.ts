/**
 * Block mode keeps memory bounded whatever the volume's size: what has been read and not yet
 * handed on (uploaded in a pack, or written into the target snapshot) stays within a bound set by
 * the concurrency, the pack size and the read batch, never the image. Structure, not timing: the
 * side the data mover hands blocks on to is slower than the side it reads them from, so without
 * back-pressure the difference would grow to the whole image. The real pack repository over a
 * local directory store; fakes of the SnapshotBlocks port.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { backupBlocks } from '../../../../functions/data-mover/block-backup.js';
import { READ_BATCH_BLOCKS, restoreBlocks } from '../../../../functions/data-mover/block-restore.js';
import { openRepository } from '../../../../shared/adapters/repository/open-repository.js';
import { repositoryKeys } from '../../../../shared/domain/storage/keys.js';
import type { PutOptions } from '../../../../shared/ports/object-store.js';
import {
  type BlockPage,
  EBS_BLOCK_SIZE,
  type EbsSnapshotStatus,
  type SnapshotBlockData,
  type SnapshotBlockRef,
  type SnapshotBlocks,
  type StartedSnapshot,
} from '../../../../shared/ports/snapshot-blocks.js';
import { DelegatingStore, localKey, tempStore } from '../../shared/adapters/repository/support.js';

const BLOCK = EBS_BLOCK_SIZE;
const MiB = 1024 * 1024;
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Bytes read and not yet handed on: `read` grows as a block (or pack range) is read, `handedOn`
 * as one is durably uploaded or written; the largest difference seen is what memory held at least.
 */
class Held {
  read = 0;
  handedOn = 0;
  max = 0;
  gotten(bytes: number): void {
    this.read += bytes;
    this.max = Math.max(this.max, this.read - this.handedOn);
  }
}

/** A snapshot of `blocks` distinct, incompressible blocks, each made when read, answered at once. */
class GeneratedSnapshot implements Pick<SnapshotBlocks, 'listSnapshotBlocks' | 'getSnapshotBlock'> {
  constructor(
    private readonly blocks: number,
    private readonly held: Held,
  ) {}
  async *listSnapshotBlocks(): AsyncIterable<BlockPage<SnapshotBlockRef>> {
    const blocks = Array.from({ length: this.blocks }, (_, index) => ({ index, token: `t${index}` }));
    yield { volumeSizeGiB: 1, blockSizeBytes: BLOCK, blocks };
  }
  async getSnapshotBlock(): Promise<SnapshotBlockData> {
    const data = randomBytes(BLOCK);
    this.held.gotten(BLOCK);
    return { data, sha256: createHash('sha256').update(data).digest() };
  }
}

/** A store whose pack uploads take `delayMs`; each one's bytes are handed on once it is durable. */
class SlowPackStore extends DelegatingStore {
  constructor(
    inner: DelegatingStore['inner'],
    private readonly held: Held,
    private readonly delayMs: number,
  ) {
    super(inner);
  }
  override async put(k: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    if (!k.startsWith(repositoryKeys.packsDir)) return this.inner.put(k, body, options);
    await pause(this.delayMs);
    await this.inner.put(k, body, options);
    this.held.handedOn += body.length;
  }
}

/** A store that counts the pack bytes its ranged reads return, and tells when none is running. */
class CountingReads extends DelegatingStore {
  private running = 0;
  private waiting: (() => void)[] = [];
  constructor(
    inner: DelegatingStore['inner'],
    private readonly held: Held,
  ) {
    super(inner);
  }
  override async getRange(
    k: string,
    range: { offset: number; length: number },
    options?: { signal?: AbortSignal },
  ): Promise<Uint8Array | undefined> {
    this.running++;
    try {
      const bytes = await this.inner.getRange?.(k, range, options);
      if (k.startsWith(repositoryKeys.packsDir)) this.held.gotten(bytes?.length ?? 0);
      return bytes;
    } finally {
      if (--this.running === 0) for (const wake of this.waiting.splice(0)) wake();
    }
  }
  /** Resolves once no ranged read is running (at once if none is). */
  idle(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }
}

/**
 * A target slower than any reader: each PutSnapshotBlock waits until no read of the repository
 * is running, so a restore reading on without waiting for its writes would read the whole image
 * first. A block is handed on once written.
 */
class SlowTarget implements Pick<SnapshotBlocks, 'startSnapshot' | 'putSnapshotBlock' | 'completeSnapshot'> {
  written = 0;
  constructor(
    private readonly held: Held,
    private readonly reads: CountingReads,
  ) {}
  async startSnapshot(): Promise<StartedSnapshot> {
    return { snapshotId: 'snap-new', status: 'pending', blockSizeBytes: BLOCK, volumeSizeGiB: 1 };
  }
  async putSnapshotBlock(o: { data: Uint8Array }): Promise<void> {
    await this.reads.idle();
    await new Promise(setImmediate);
    this.written++;
    this.held.handedOn += o.data.length;
  }
  async completeSnapshot(): Promise<EbsSnapshotStatus> {
    return 'completed';
  }
}

describe('block mode memory', () => {
  it('holds at most the blocks in flight and the packs uploading when uploads are slower than EBS', async () => {
    // Prepare: 48 blocks (24 MiB) read at once from EBS, uploaded in 1 MiB packs two at a time.
    const { store: local } = await tempStore();
    const held = new Held();
    const concurrency = 4;
    const packTargetBytes = MiB;
    const uploadConcurrency = 2;
    const repository = await openRepository({
      store: new SlowPackStore(local, held, 20),
      keys: localKey(),
      create: { packTargetBytes },
      uploadConcurrency,
    });

    // Act
    const backup = await backupBlocks({
      blocks: new GeneratedSnapshot(48, held) as unknown as SnapshotBlocks,
      repository,
      snapshotId: 'snap-1',
      manifestId: 'm-1',
      concurrency,
    });

    // Assess: the blocks being read or waiting for room, the open pack (one block over its
    // target at most) and the packs uploading; never the 24 MiB read.
    expect(backup.manifest.stats.blocksRead).toBe(48);
    const bound = (concurrency + 1) * BLOCK + (uploadConcurrency + 1) * (packTargetBytes + BLOCK);
    expect(held.read).toBe(48 * BLOCK);
    expect(held.max).toBeLessThanOrEqual(bound);
  }, 60_000);

  it('holds at most the read batches and the writes in flight when the target is slower than the reads', async () => {
    // Prepare: 96 distinct blocks (48 MiB) backed up, then restored into a slow target.
    const { store: local } = await tempStore();
    const keys = localKey();
    const uncounted = new Held();
    const written = await openRepository({ store: local, keys, create: { packTargetBytes: 4 * MiB } });
    await backupBlocks({
      blocks: new GeneratedSnapshot(96, uncounted) as unknown as SnapshotBlocks,
      repository: written,
      snapshotId: 'snap-1',
      manifestId: 'm-1',
    });
    const held = new Held();
    const reads = new CountingReads(local, held);
    const repository = await openRepository({ store: reads, keys });
    const target = new SlowTarget(held, reads);
    const concurrency = 4;

    // Act
    const restored = await restoreBlocks({
      repository,
      manifestId: 'm-1',
      target: target as unknown as SnapshotBlocks,
      clientToken: 'restore-1',
      concurrency,
    });

    // Assess: the batch being written, the next one read ahead, and the writes in flight.
    expect(restored.blocksWritten).toBe(96);
    expect(held.read).toBeGreaterThanOrEqual(96 * BLOCK);
    expect(held.max).toBeLessThanOrEqual((2 * READ_BATCH_BLOCKS + concurrency + 1) * BLOCK);
  }, 60_000);
});
