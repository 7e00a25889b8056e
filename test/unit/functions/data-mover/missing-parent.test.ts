/**
 * A data movement whose parent manifest was deleted (`lifeboat backup delete`, then garbage
 * collection) between planning and running: the backup reads everything, over the real pack
 * repository on a local directory store. Block mode reads a fake of the SnapshotBlocks port.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { backupBlocks } from '../../../../functions/data-mover/block-backup.js';
import { backupFileTree } from '../../../../functions/data-mover/file-backup.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../../shared/adapters/local-key-wrapper.js';
import {
  type OpenedRepository,
  openRepository,
} from '../../../../shared/adapters/repository/open-repository.js';
import { fileTreeChildren } from '../../../../shared/domain/files/tree.js';
import type { Clock } from '../../../../shared/ports/clock.js';
import { EBS_BLOCK_SIZE, type SnapshotBlocks } from '../../../../shared/ports/snapshot-blocks.js';
import { FakeBlocks } from './support.js';

const clock: Clock = { now: () => new Date('2026-11-23T12:00:00.000Z') };

describe('a backup whose parent manifest was deleted and collected', () => {
  let root: string;
  let repo: OpenedRepository;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'missing-parent-'));
    repo = await openRepository({
      store: new LocalDirectoryStore(join(root, 'store')),
      keys: new LocalKeyWrapper(new Uint8Array(32).fill(5)),
      create: { packTargetBytes: 64 * 1024 },
      fileTreeReferences: fileTreeChildren,
    });
  });

  const forget = async (id: string): Promise<void> => {
    await repo.deleteManifest(id);
    await repo.collectGarbage();
    await repo.collectGarbage();
  };

  it('block mode: reads every block, not incremental, and names no parent', async () => {
    // Prepare: a first snapshot backed up, a second one differing in one block; the first's manifest goes.
    const block = (fill: number): Uint8Array => new Uint8Array(EBS_BLOCK_SIZE).fill(fill);
    const blocks = new FakeBlocks({
      'snap-1': new Map([
        [0, block(1)],
        [3, block(2)],
        [9, block(3)],
      ]),
      'snap-2': new Map([
        [0, block(1)],
        [3, block(7)],
        [9, block(3)],
      ]),
    });
    const snapshotBlocks = blocks as unknown as SnapshotBlocks;
    await backupBlocks({ blocks: snapshotBlocks, repository: repo, snapshotId: 'snap-1', manifestId: 'm-1' });
    await forget('m-1');
    blocks.blocksRead = 0;

    // Act
    const result = await backupBlocks({
      blocks: snapshotBlocks,
      repository: repo,
      snapshotId: 'snap-2',
      manifestId: 'm-2',
      parentManifestId: 'm-1',
    });

    // Assess
    expect(result.incremental).toBe(false);
    expect(blocks.changedListings).toEqual([]);
    expect(blocks.blocksRead).toBe(3);
    expect(result.run.blocksRead).toBe(3);
    expect(result.manifest.parent).toBeUndefined();
    expect(result.manifest.stats.totalBytes).toBe(3 * EBS_BLOCK_SIZE);
    const stored = await repo.readManifest('m-2');
    expect(stored.kind === 'block' ? stored.blockMap.length : -1).toBe(1);
    expect((await repo.verify()).problems).toEqual([]);
  });

  it('file mode: reads every file again instead of failing', async () => {
    // Prepare
    const source = join(root, 'volume');
    await mkdir(join(source, 'dir'), { recursive: true });
    const content = randomBytes(200_000);
    await writeFile(join(source, 'dir', 'a.bin'), content);
    await writeFile(join(source, 'b.txt'), 'hello');
    await backupFileTree({ repository: repo, clock, root: source, manifestId: 'f-1' });
    await forget('f-1');

    // Act
    const result = await backupFileTree({
      repository: repo,
      clock,
      root: source,
      manifestId: 'f-2',
      parent: 'f-1',
    });

    // Assess
    expect(result.filesUnchanged).toBe(0);
    expect(result.files).toBe(2);
    expect(result.manifest.stats.bytesRead).toBe(content.length + 5);
    expect((await repo.verify()).problems).toEqual([]);
  });
});
