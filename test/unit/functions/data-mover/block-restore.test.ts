/**
 * Block-mode restore over the real pack repository (a local directory store whose ranged reads
 * are slow and abort as the AWS SDK's do) into a fake of the SnapshotBlocks port.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backupBlocks } from '../../../../functions/data-mover/block-backup.js';
import { restoreBlocks } from '../../../../functions/data-mover/block-restore.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../../shared/adapters/local-key-wrapper.js';
import { openRepository } from '../../../../shared/adapters/repository/open-repository.js';
import { CloudRequestRefused } from '../../../../shared/domain/errors.js';
import type { ObjectStore } from '../../../../shared/ports/object-store.js';
import {
  EBS_BLOCK_SIZE,
  type EbsSnapshotStatus,
  type SnapshotBlocks,
  type StartedSnapshot,
} from '../../../../shared/ports/snapshot-blocks.js';
import { FakeBlocks } from './support.js';

/** A store whose ranged reads take `delayMs` and, when aborted meanwhile, fail as the SDK's do. */
function slowRanges(inner: LocalDirectoryStore, delayMs: number): ObjectStore {
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property !== 'getRange') return Reflect.get(target, property, receiver);
      return (key: string, range: { offset: number; length: number }, options?: { signal?: AbortSignal }) =>
        new Promise<Uint8Array | undefined>((resolve, reject) => {
          const aborted = (): void => {
            clearTimeout(timer);
            reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
          };
          const timer = setTimeout(() => {
            options?.signal?.removeEventListener('abort', aborted);
            resolve(target.getRange(key, range));
          }, delayMs);
          options?.signal?.addEventListener('abort', aborted, { once: true });
        });
    },
  });
}

/** A target snapshot that refuses block `failAt` a little after it is sent. */
class RefusingTarget
  implements Pick<SnapshotBlocks, 'startSnapshot' | 'putSnapshotBlock' | 'completeSnapshot'>
{
  written = 0;
  constructor(private readonly failAt: number) {}
  async startSnapshot(): Promise<StartedSnapshot> {
    return { snapshotId: 'snap-new', status: 'pending', blockSizeBytes: EBS_BLOCK_SIZE, volumeSizeGiB: 1 };
  }
  async putSnapshotBlock(o: { blockIndex: number }): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (o.blockIndex === this.failAt)
      throw new CloudRequestRefused(`PutSnapshotBlock #${o.blockIndex}: refused`, { code: 'AccessDenied' });
    this.written++;
  }
  async completeSnapshot(): Promise<EbsSnapshotStatus> {
    return 'completed';
  }
}

describe('block restore', () => {
  it('reports the write that failed, not the abort of a read it cut short', async () => {
    // Prepare: 64 distinct blocks backed up, then read back through slow ranged reads.
    const dir = await mkdtemp(join(tmpdir(), 'block-restore-'));
    const local = new LocalDirectoryStore(dir);
    const keys = new LocalKeyWrapper(new Uint8Array(32).fill(9));
    const image = new Map(
      Array.from({ length: 64 }, (_, i) => [i, new Uint8Array(EBS_BLOCK_SIZE).fill(i + 1)] as const),
    );
    const source = new FakeBlocks({ 'snap-1': image }) as unknown as SnapshotBlocks;
    const written = await openRepository({ store: local, keys, create: { packTargetBytes: 1024 * 1024 } });
    await backupBlocks({ blocks: source, repository: written, snapshotId: 'snap-1', manifestId: 'm-1' });
    const repository = await openRepository({ store: slowRanges(local, 50), keys });
    const target = new RefusingTarget(20);

    // Act
    const restored = restoreBlocks({
      repository,
      manifestId: 'm-1',
      target: target as unknown as SnapshotBlocks,
      clientToken: 'restore-1',
    });

    // Assess: the refusal itself, with its code, once the reads in flight were stopped.
    await expect(restored).rejects.toBeInstanceOf(CloudRequestRefused);
    await expect(restored).rejects.toMatchObject({ code: 'AccessDenied' });
    expect(target.written).toBeLessThan(64);
  });
});
