/**
 * Block mode end to end against moto's EBS (with the launcher's EBS direct API fixes) and the real
 * repository over a local directory: a volume image seeded as a snapshot, a volume made from it and
 * the EC2 snapshot of that volume (what a PV's snapshot is); a full backup, an incremental after 1%
 * of the blocks changed (reads counted at the EBS port), restores into new snapshots (another
 * region; another account with a KMS key and a volume), every block's SHA-256 compared with the
 * source; a backup killed midway resumes from its checkpoint.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BlockBackupCheckpoint,
  type BlockProgress,
  backupBlocks,
} from '../../../functions/data-mover/block-backup.js';
import { restoreBlocks } from '../../../functions/data-mover/block-restore.js';
import { assumedRoleCredentials, snapshotBlocksFor } from '../../../shared/adapters/ebs-snapshot-blocks.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../shared/adapters/local-key-wrapper.js';
import {
  type OpenedRepository,
  openRepository,
} from '../../../shared/adapters/repository/open-repository.js';
import {
  EBS_BLOCK_SIZE,
  type SnapshotBlockData,
  type SnapshotBlocks,
} from '../../../shared/ports/snapshot-blocks.js';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';
import {
  DATA_BLOCKS,
  isZero,
  VOLUME_GIB,
  volumeHashes,
  volumeImage,
  writeSnapshot,
} from '../support/snapshot-image.js';

const BLOCK = EBS_BLOCK_SIZE;
const MiB = 1024 * 1024;

/** The real adapter, counting the blocks read through it. */
class CountingBlocks implements SnapshotBlocks {
  reads = 0;
  writes = 0;
  constructor(private readonly inner: SnapshotBlocks) {}
  listSnapshotBlocks(o: Parameters<SnapshotBlocks['listSnapshotBlocks']>[0]) {
    return this.inner.listSnapshotBlocks(o);
  }
  listChangedBlocks(o: Parameters<SnapshotBlocks['listChangedBlocks']>[0]) {
    return this.inner.listChangedBlocks(o);
  }
  getSnapshotBlock(o: Parameters<SnapshotBlocks['getSnapshotBlock']>[0]): Promise<SnapshotBlockData> {
    this.reads++;
    return this.inner.getSnapshotBlock(o);
  }
  startSnapshot(o: Parameters<SnapshotBlocks['startSnapshot']>[0]) {
    return this.inner.startSnapshot(o);
  }
  putSnapshotBlock(o: Parameters<SnapshotBlocks['putSnapshotBlock']>[0]) {
    this.writes++;
    return this.inner.putSnapshotBlock(o);
  }
  completeSnapshot(o: Parameters<SnapshotBlocks['completeSnapshot']>[0]) {
    return this.inner.completeSnapshot(o);
  }
}

/** What a PV's snapshot is: a volume created from the seed, and EC2's snapshot of that volume. */
async function pvSnapshotOf(ec2: EC2Client, seed: string): Promise<{ volumeId: string; snapshotId: string }> {
  const volume = await ec2.send(
    new CreateVolumeCommand({ SnapshotId: seed, AvailabilityZone: 'us-east-1a' }),
  );
  const snapshot = await ec2.send(new CreateSnapshotCommand({ VolumeId: volume.VolumeId }));
  return { volumeId: volume.VolumeId ?? '', snapshotId: snapshot.SnapshotId ?? '' };
}

function rate(bytes: number, ms: number): string {
  return `${(bytes / MiB / (ms / 1000)).toFixed(1)} MiB/s`;
}

describe('block mode: EBS snapshot → repository → EBS snapshot', () => {
  let root: string;
  let repository: OpenedRepository;
  let source: SnapshotBlocks;
  let ec2: EC2Client;
  const image = volumeImage();
  let pv: { volumeId: string; snapshotId: string };
  let changedSnapshot: string;
  let fullManifestId: string;
  let fullChunks: readonly string[];
  const incrementalManifestId = uniqueName('pvc-data-incr');

  beforeAll(async () => {
    const env = testEnv();
    root = await mkdtemp(join(tmpdir(), 'block-mode-'));
    repository = await openRepository({
      store: new LocalDirectoryStore(root),
      keys: new LocalKeyWrapper(randomBytes(32)),
      create: {},
    });
    const config = awsConfig();
    source = snapshotBlocksFor({
      region: env.aws.region,
      endpoint: env.aws.endpoint,
      credentials: config.credentials,
    });
    ec2 = new EC2Client(config);
    pv = await pvSnapshotOf(ec2, await writeSnapshot(source, image));
  }, 300_000);

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('backs up every non-empty block once, skipping zero blocks and storing duplicates once', async () => {
    const counting = new CountingBlocks(source);
    const progress: BlockProgress[] = [];
    fullManifestId = uniqueName('pvc-data-full');
    const started = Date.now();
    const result = await backupBlocks({
      blocks: counting,
      repository,
      snapshotId: pv.snapshotId,
      manifestId: fullManifestId,
      tags: { 'velero.io/backup': 'full' },
      source: { volumeId: pv.volumeId, region: 'us-east-1' },
      concurrency: 32,
      onProgress: (p) => progress.push(p),
    });
    const ms = Date.now() - started;

    const zeroBlocks = [...image.values()].filter(isZero).length;
    const nonZero = image.size - zeroBlocks;
    expect(counting.reads).toBe(DATA_BLOCKS);
    expect(result.run.blocksRead).toBe(DATA_BLOCKS);
    expect(result.incremental).toBe(false);
    const { manifest } = result;
    expect(manifest.stats.totalBytes).toBe(nonZero * BLOCK);
    expect(manifest.stats.bytesRead).toBe(DATA_BLOCKS * BLOCK);
    expect(manifest.volumeSizeBytes).toBe(VOLUME_GIB * 1024 ** 3);
    expect(manifest.blockMap).toHaveLength(3);
    // 60 blocks are copies of 4: 56 deduplicated.
    expect(manifest.stats.blobsDeduplicated).toBe(56);
    expect(manifest.stats.storedBytes).toBeLessThan(manifest.stats.rawBytesStored);
    const last = progress.at(-1);
    expect(last).toMatchObject({ totalKnown: true, blocksDone: DATA_BLOCKS, blocksTotal: DATA_BLOCKS });
    expect(last?.bytesDone).toBe(last?.bytesTotal);
    expect(await repository.readManifest(fullManifestId)).toEqual(manifest);
    fullChunks = manifest.blockMap;
    console.log(
      `[block-mode] full backup: ${counting.reads} blocks read (${(DATA_BLOCKS * BLOCK) / MiB} MiB) in ${ms} ms, ${rate(DATA_BLOCKS * BLOCK, ms)}; stored ${(manifest.stats.storedBytes / MiB).toFixed(1)} MiB of ${(manifest.stats.rawBytesStored / MiB).toFixed(1)} MiB raw`,
    );
  }, 300_000);

  it('backs up an incremental with 1% of the blocks changed by reading only those', async () => {
    // 3 of 300: one rewritten, one new where there was none, one now zeros.
    const rewritten = 34;
    // In range 2, where there was no block: range 1, between the changes, stays as it was.
    const added = 9001;
    const zeroed = 4 * 34;
    const changes = new Map<number, Uint8Array>([
      [rewritten, randomBytes(BLOCK)],
      [added, randomBytes(BLOCK)],
      [zeroed, new Uint8Array(BLOCK)],
    ]);
    const seed = await writeSnapshot(source, changes, pv.snapshotId);
    changedSnapshot = (await pvSnapshotOf(ec2, seed)).snapshotId;

    const counting = new CountingBlocks(source);
    const started = Date.now();
    const result = await backupBlocks({
      blocks: counting,
      repository,
      snapshotId: changedSnapshot,
      manifestId: incrementalManifestId,
      parentManifestId: fullManifestId,
      source: { volumeId: pv.volumeId },
    });
    const ms = Date.now() - started;

    expect(result.incremental).toBe(true);
    // zeroed was a block with data, read because it changed; nothing else is read.
    expect(counting.reads).toBe(changes.size);
    expect(result.run.blocksRead).toBe(changes.size);
    expect(result.manifest.parent).toBe(fullManifestId);
    // Range 1 did not change: its map chunk is the full backup's; ranges 0 and 2 have new ones.
    expect(result.manifest.blockMap).toHaveLength(3);
    expect(result.manifest.blockMap[1]).toBe(fullChunks[1]);
    expect(result.manifest.blockMap[0]).not.toBe(fullChunks[0]);
    expect(result.manifest.blockMap[2]).not.toBe(fullChunks[2]);
    const nonZeroBefore = [...image.values()].filter((d) => !isZero(d)).length;
    expect(result.manifest.stats.totalBytes).toBe((nonZeroBefore + 1 - 1) * BLOCK);
    console.log(
      `[block-mode] incremental: ${counting.reads} of ${DATA_BLOCKS} blocks read (${((100 * counting.reads) / DATA_BLOCKS).toFixed(1)}%) in ${ms} ms`,
    );
  }, 300_000);

  it('restores the full backup block for block into a new snapshot in another region', async () => {
    const env = testEnv();
    const config = awsConfig({ region: 'us-west-2' });
    const west = snapshotBlocksFor({
      region: 'us-west-2',
      endpoint: env.aws.endpoint,
      credentials: config.credentials,
    });
    const started = Date.now();
    const result = await restoreBlocks({
      repository,
      manifestId: fullManifestId,
      target: west,
      targetSnapshotter: new EbsSnapshotter({ client: new EC2Client(config) }),
      clientToken: uniqueName('restore-full'),
      tags: { 'velero.io/restore': 'full' },
      concurrency: 32,
    });
    const ms = Date.now() - started;
    const expected = await volumeHashes(source, pv.snapshotId);
    expect(result.blocksWritten).toBe(expected.size);
    expect(await volumeHashes(west, result.snapshotId)).toEqual(expected);
    console.log(
      `[block-mode] restore (full): ${result.blocksWritten} blocks written in ${ms} ms, ${rate(result.bytesWritten, ms)}`,
    );
  }, 300_000);

  it('restores the incremental block for block into another account, encrypted with its KMS key, and makes a volume', async () => {
    const env = testEnv();
    const credentials = assumedRoleCredentials({
      region: env.aws.region,
      endpoint: env.aws.endpoint,
      credentials: awsConfig().credentials,
      roleArn: `arn:aws:iam::${env.aws.accounts.dr}:role/lifeboat-restore`,
      externalId: 'lifeboat-block-mode',
    });
    const drConfig = { region: env.aws.region, endpoint: env.aws.endpoint, credentials };
    const key = await new KMSClient(drConfig).send(new CreateKeyCommand({ Description: 'dr restore' }));
    const kmsKeyArn = key.KeyMetadata?.Arn ?? '';
    expect(kmsKeyArn).toContain(`:${env.aws.accounts.dr}:`);
    const dr = snapshotBlocksFor({ ...drConfig });
    const drEc2 = new EC2Client(drConfig);
    const clientToken = uniqueName('restore-incr');
    const request = {
      repository,
      manifestId: incrementalManifestId,
      target: dr,
      targetSnapshotter: new EbsSnapshotter({ client: drEc2 }),
      clientToken,
      kmsKeyArn,
      volume: { availabilityZone: 'us-east-1b', volumeType: 'gp3', clientToken: `${clientToken}-volume` },
    };
    const result = await restoreBlocks(request);

    expect(await volumeHashes(dr, result.snapshotId)).toEqual(await volumeHashes(source, changedSnapshot));
    const snapshot = (await drEc2.send(new DescribeSnapshotsCommand({ SnapshotIds: [result.snapshotId] })))
      .Snapshots?.[0];
    expect(snapshot).toMatchObject({
      State: 'completed',
      Encrypted: true,
      KmsKeyId: kmsKeyArn,
      OwnerId: env.aws.accounts.dr,
    });
    const volume = (await drEc2.send(new DescribeVolumesCommand({ VolumeIds: [result.volumeId ?? ''] })))
      .Volumes?.[0];
    expect(volume).toMatchObject({
      SnapshotId: result.snapshotId,
      AvailabilityZone: 'us-east-1b',
      Encrypted: true,
    });
    // Not in the source account.
    await expect(
      ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [result.snapshotId] })),
    ).rejects.toThrow();

    // A re-run (the same client token) finds the completed snapshot and writes nothing again.
    const counting = new CountingBlocks(dr);
    const again = await restoreBlocks({ ...request, target: counting });
    expect(again.snapshotId).toBe(result.snapshotId);
    expect(counting.writes).toBe(0);
  }, 300_000);

  it('resumes a backup killed midway from its checkpoint, reading only what was not finished', async () => {
    let saved: BlockBackupCheckpoint | undefined;
    const checkpoints = {
      load: async () => saved,
      save: async (c: BlockBackupCheckpoint) => {
        saved = c;
      },
    };
    const manifestId = uniqueName('pvc-data-resumed');
    const controller = new AbortController();
    const first = new CountingBlocks(source);
    await expect(
      backupBlocks({
        blocks: first,
        repository,
        snapshotId: pv.snapshotId,
        manifestId,
        checkpoints,
        checkpointEveryMs: 0,
        concurrency: 4,
        onProgress: (p) => {
          // Past the first range's 121 blocks (indexes 0…4080): kill it in the second.
          if (p.blocksDone >= 150) controller.abort(new Error('killed'));
        },
        signal: controller.signal,
      }),
    ).rejects.toThrow('killed');
    expect(saved?.nextRange).toBeGreaterThanOrEqual(1);
    await expect(repository.readManifest(manifestId)).rejects.toThrow();

    const atResume = saved;
    const second = new CountingBlocks(source);
    const result = await backupBlocks({
      blocks: second,
      repository,
      snapshotId: pv.snapshotId,
      manifestId,
      checkpoints,
    });
    expect(result.run.resumedAtBlock).toBe((saved?.nextRange ?? 0) * 4096);
    const finishedBefore = [...image.keys()].filter((i) => i < result.run.resumedAtBlock).length;
    expect(second.reads).toBe(DATA_BLOCKS - finishedBefore);
    expect(second.reads).toBeLessThan(DATA_BLOCKS);
    // The same block map as the uninterrupted backup of the same snapshot.
    expect(result.manifest.blockMap).toEqual(fullChunks);
    expect(result.manifest.stats.blocksRead).toBe((atResume?.blocksRead ?? 0) + second.reads);
    expect(first.reads).toBeGreaterThanOrEqual(150);
  }, 300_000);

  it('reads everything when EBS cannot compare against the parent’s snapshot: deleted, or of another volume', async () => {
    const image2 = new Map([[5, randomBytes(BLOCK)]]);
    const gone = await writeSnapshot(source, image2);
    const parentId = uniqueName('pvc-data-gone');
    await backupBlocks({ blocks: source, repository, snapshotId: gone, manifestId: parentId });
    const next = await writeSnapshot(source, new Map([[6, randomBytes(BLOCK)]]), gone);
    await new EbsSnapshotter({ client: ec2 }).deleteSnapshot(gone);
    const counting = new CountingBlocks(source);
    const result = await backupBlocks({
      blocks: counting,
      repository,
      snapshotId: next,
      manifestId: uniqueName('pvc-data-after-gone'),
      parentManifestId: parentId,
    });
    expect(result.incremental).toBe(false);
    expect(result.manifest.parent).toBeUndefined();
    expect(counting.reads).toBe(2);

    // A parent manifest of another volume's snapshot: EBS refuses to compare, everything is read.
    const unrelated = await backupBlocks({
      blocks: new CountingBlocks(source),
      repository,
      snapshotId: pv.snapshotId,
      manifestId: uniqueName('pvc-data-unrelated'),
      parentManifestId: result.manifest.id,
    });
    expect(unrelated.incremental).toBe(false);
    expect(unrelated.run.blocksRead).toBe(DATA_BLOCKS);
    expect(unrelated.manifest.blockMap).toEqual(fullChunks);
  }, 120_000);
});
