/**
 * The data mover's container entry run as the real child process (cli/local/data-mover-process)
 * on block-backup jobs against moto: EBS direct APIs for the snapshot (seeded with the block-mode
 * image), S3 for the repository and the job's working data, KMS for the repository's key.
 * Killed with SIGKILL midway and run again, the job completes, no blob is in two packs (every
 * pack's own header read through the repository adapter), the blocks read back are the image's,
 * and the `verify` command confirms every blob (and reports a pack corrupted afterwards).
 * SIGTERM and the cancel marker cancel a job cleanly; a re-run after SIGTERM completes. A block
 * restore job writes the backup into another account (through its role) with a volume; the
 * local `ecs:runTask.sync` runs the job of a RunTask request's container override.
 */

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeSnapshotsCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type DataMoverProcess,
  finalProgressOf,
  runDataMoverTask,
  startDataMoverProcess,
} from '../../../cli/local/data-mover-process.js';
import { assumedRoleCredentials, snapshotBlocksFor } from '../../../shared/adapters/ebs-snapshot-blocks.js';
import { KmsKeyWrapper } from '../../../shared/adapters/kms-key-wrapper.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { openFormat } from '../../../shared/adapters/repository/format-object.js';
import { openRepository } from '../../../shared/adapters/repository/open-repository.js';
import { readPackHeader } from '../../../shared/adapters/repository/pack-io.js';
import { S3ObjectStore } from '../../../shared/adapters/s3-object-store.js';
import {
  DATA_MOVER_EXIT,
  type DataMoverProgress,
  dataMoverProgress,
} from '../../../shared/contracts/data-mover-job.js';
import { parseBlockMapChunk } from '../../../shared/domain/repository/block-map.js';
import { dataMoverWorkKeys, repositoryKeyId, repositoryKeys } from '../../../shared/domain/storage/keys.js';
import { EBS_BLOCK_SIZE } from '../../../shared/ports/snapshot-blocks.js';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';
import {
  DATA_BLOCKS,
  hashOf,
  isZero,
  volumeHashes,
  volumeImage,
  writeSnapshot,
} from '../support/snapshot-image.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('the data mover process on block-backup jobs', () => {
  const image = volumeImage();
  const nonZero = [...image].filter(([, data]) => !isZero(data));
  /** What the repository must hold of the image: each distinct non-zero block once. */
  const distinctBlocks = new Set(nonZero.map(([, data]) => hashOf(data))).size;
  let bucket: string;
  let kmsKeyId: string;
  let snapshotId: string;
  let environment: Record<string, string>;
  const region = (): string => testEnv().aws.region;

  beforeAll(async () => {
    const env = testEnv();
    const config = awsConfig();
    bucket = uniqueName('data-mover');
    await new S3Client(config).send(new CreateBucketCommand({ Bucket: bucket }));
    const key = await new KMSClient(config).send(new CreateKeyCommand({ Description: 'data mover test' }));
    kmsKeyId = key.KeyMetadata?.Arn ?? '';
    const blocks = snapshotBlocksFor({
      region: env.aws.region,
      endpoint: env.aws.endpoint,
      credentials: config.credentials,
    });
    snapshotId = await writeSnapshot(blocks, image);
    environment = {
      AWS_REGION: env.aws.region,
      AWS_ENDPOINT_URL: env.aws.endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      LIFEBOAT_S3_FORCE_PATH_STYLE: 'true',
    };
  }, 300_000);

  /** The storage location a test's repository and working data live in. */
  const storeAt = (prefix: string): S3ObjectStore =>
    new S3ObjectStore({ client: new S3Client({ ...awsConfig(), maxAttempts: 8 }), bucket, prefix });

  const backupJob = (options: { jobId: string; prefix: string; concurrency: number }) => ({
    kind: 'block-backup',
    jobId: options.jobId,
    repository: { bucket, prefix: options.prefix, region: region(), kmsKeyId },
    source: { snapshotId, volumeId: 'vol-0123456789abcdef0' },
    tags: { backup: 'nightly', pvcNamespace: 'shop', pvcName: 'data' },
    concurrency: options.concurrency,
    progressIntervalMs: 100,
    checkpointIntervalMs: 0,
  });

  async function progressOf(store: S3ObjectStore, jobId: string): Promise<DataMoverProgress | undefined> {
    const body = await store.get(dataMoverWorkKeys(jobId).progress);
    return body ? dataMoverProgress.parse(JSON.parse(Buffer.from(body).toString('utf8'))) : undefined;
  }

  /** The progress document once `ready` holds for it, read while the process runs. */
  async function progressWhen(options: {
    store: S3ObjectStore;
    jobId: string;
    process: DataMoverProcess;
    ready: (p: DataMoverProgress) => boolean;
  }): Promise<DataMoverProgress> {
    let exited = false;
    void options.process.exited.then(() => {
      exited = true;
    });
    for (let polls = 0; polls < 3000; polls++) {
      const progress = await progressOf(options.store, options.jobId);
      if (progress && options.ready(progress)) return progress;
      if (exited) {
        const exit = await options.process.exited;
        throw new Error(
          `the data mover ended first (${exit.code}): ${exit.stderr} ${JSON.stringify(progress)}`,
        );
      }
      await sleep(40);
    }
    throw new Error(`the progress of ${options.jobId} never got there`);
  }

  /** Every blob id in every pack, read from the packs' own headers through the repository adapter. */
  async function blobsInPacks(store: S3ObjectStore): Promise<{ packs: string[]; blobs: string[] }> {
    const keys = new KmsKeyWrapper({ client: new KMSClient(awsConfig()), keyId: kmsKeyId });
    const { crypto } = await openFormat({ store, keys, now: new Date() });
    const packs = (await store.list(repositoryKeys.packsDir))
      .map(repositoryKeyId)
      .filter((id) => /^[0-9a-f]{32}$/.test(id));
    const blobs: string[] = [];
    for (const packId of packs) {
      const header = await readPackHeader({ store, crypto, packId });
      blobs.push(...(header?.entries.map((e) => e.id) ?? []));
    }
    return { packs, blobs };
  }

  const verifyArgs = (prefix: string): string[] => [
    'verify',
    '--bucket',
    bucket,
    '--prefix',
    prefix,
    '--region',
    region(),
    '--kms-key',
    kmsKeyId,
  ];

  it('completes after a SIGKILL midway when run again, uploads no blob twice, and verify confirms every blob', async () => {
    const prefix = 'killed';
    const store = storeAt(prefix);
    const jobId = uniqueName('pvc-data');
    const job = backupJob({ jobId, prefix, concurrency: 1 });

    // Prepare: run until the second block-map range is under way (the first one checkpointed).
    const first = startDataMoverProcess({ job, environment });
    const running = await progressWhen({
      store,
      jobId,
      process: first,
      ready: (p) => p.state === 'Running' && (p.blocksDone ?? 0) >= 150,
    });
    expect(await store.exists(dataMoverWorkKeys(jobId).checkpoint)).toBe(true);
    first.kill('SIGKILL');
    const killed = await first.exited;

    // Assess the crash: midway, a progress document left Running, no manifest.
    expect(killed.signal).toBe('SIGKILL');
    expect(running).toMatchObject({ jobId, kind: 'block-backup', attempt: 1, phase: 'moving' });
    expect(running.bytesDone).toBeGreaterThan(0);
    expect(running.blocksDone).toBeLessThan(DATA_BLOCKS);
    expect(running.bytesTotal).toBeGreaterThanOrEqual(running.bytesDone);
    expect((await progressOf(store, jobId))?.state).toBe('Running');
    expect(await store.exists(repositoryKeys.snapshot(jobId))).toBe(false);

    // Act: the same job again.
    const second = await startDataMoverProcess({ job, environment }).exited;

    expect(second.code, second.stderr).toBe(DATA_MOVER_EXIT.completed);
    const done = finalProgressOf(second);
    expect(done).toMatchObject({ jobId, state: 'Completed', phase: 'done', attempt: 2, totalKnown: true });
    expect(await progressOf(store, jobId)).toEqual(done);
    const result = done?.result;
    if (result?.kind !== 'block-backup')
      throw new Error(`not a block-backup result: ${JSON.stringify(result)}`);
    expect(result.manifestId).toBe(jobId);
    expect(result.run.alreadyStored).toBe(false);
    // It continued from the crashed run's checkpoint: the first range was not read again.
    expect(result.run.resumedAtBlock).toBeGreaterThanOrEqual(4096);
    expect(result.run.blocksRead).toBeLessThan(DATA_BLOCKS);
    expect(result.stats.totalBytes).toBe(nonZero.length * EBS_BLOCK_SIZE);

    // No blob was uploaded twice: every blob is in exactly one pack, and nothing else is stored.
    const { packs, blobs } = await blobsInPacks(store);
    const manifestKeys = await store.list(repositoryKeys.snapshotsDir);
    expect(manifestKeys).toEqual([repositoryKeys.snapshot(jobId)]);
    const repository = await openRepository({
      store,
      keys: new KmsKeyWrapper({ client: new KMSClient(awsConfig()), keyId: kmsKeyId }),
    });
    const manifest = await repository.readManifest(jobId);
    if (manifest.kind !== 'block') throw new Error('not a block manifest');
    expect(new Set(blobs).size).toBe(blobs.length);
    expect(blobs.length).toBe(distinctBlocks + manifest.blockMap.length);
    expect(manifest.tags).toEqual({
      'velero.io/backup': 'nightly',
      'velero.io/pvc-namespace': 'shop',
      'velero.io/pvc-name': 'data',
    });

    // What was stored is the image, block for block.
    const stored = new Map<number, string>();
    for (const chunk of manifest.blockMap) {
      const entries = parseBlockMapChunk(Buffer.from(await repository.getBlob(chunk)).toString('utf8'));
      for (const [index, blobId] of entries) stored.set(index, hashOf(await repository.getBlob(blobId)));
    }
    expect(stored).toEqual(new Map(nonZero.map(([index, data]) => [index, hashOf(data)])));

    console.log(
      `[data-mover] killed at ${running.blocksDone} of ${DATA_BLOCKS} blocks; the re-run resumed at block ${result.run.resumedAtBlock} and read ${result.run.blocksRead} blocks; ${packs.length} packs hold ${blobs.length} blobs, each once (${distinctBlocks} data, ${manifest.blockMap.length} block-map chunks)`,
    );

    // A third run of the completed job does nothing and answers the same.
    const third = await startDataMoverProcess({ job, environment }).exited;
    expect(third.code, third.stderr).toBe(DATA_MOVER_EXIT.completed);
    expect(finalProgressOf(third)).toEqual(done);
    expect((await blobsInPacks(store)).packs.sort()).toEqual([...packs].sort());

    // verify, by hand: every blob's hash confirmed.
    const verified = await startDataMoverProcess({ args: verifyArgs(prefix), environment }).exited;
    expect(verified.code, verified.stderr).toBe(DATA_MOVER_EXIT.completed);
    expect(finalProgressOf(verified)?.result).toEqual({
      kind: 'verify',
      blobsChecked: blobs.length,
      bytesChecked: expect.any(Number),
      problems: [],
      problemCount: 0,
    });

    // verify can fail: one byte of a pack's last blob changed is reported by its blob id.
    const packKey = repositoryKeys.pack(packs[0] as string);
    const bytes = Buffer.from((await store.get(packKey)) as Uint8Array);
    bytes[bytes.length - 20] = (bytes[bytes.length - 20] as number) ^ 0xff;
    await store.put(packKey, bytes);
    const corrupt = await startDataMoverProcess({ args: verifyArgs(prefix), environment }).exited;
    expect(corrupt.code).toBe(DATA_MOVER_EXIT.verifyProblems);
    const report = finalProgressOf(corrupt)?.result;
    expect(report).toMatchObject({ kind: 'verify', problemCount: 1 });
    expect(corrupt.stderr).toContain('verify found 1 problem');
  }, 600_000);

  it('ends Cancelled with exit 3 on SIGTERM (what ECS StopTask sends), and a re-run completes', async () => {
    const prefix = 'stopped';
    const store = storeAt(prefix);
    const jobId = uniqueName('pvc-stop');
    const job = backupJob({ jobId, prefix, concurrency: 1 });
    const run = startDataMoverProcess({ job, environment });
    const running = await progressWhen({
      store,
      jobId,
      process: run,
      ready: (p) => p.state === 'Running' && p.bytesDone > 0,
    });
    run.kill('SIGTERM');
    const stopped = await run.exited;

    expect(running.blocksDone).toBeLessThan(DATA_BLOCKS);
    expect(stopped.code).toBe(DATA_MOVER_EXIT.cancelled);
    expect(stopped.stderr).toContain('the data mover job was cancelled: SIGTERM received');
    const cancelled = await progressOf(store, jobId);
    expect(cancelled).toMatchObject({
      state: 'Cancelled',
      attempt: 1,
      error: { name: 'DataMoverCancelled', retryable: false },
    });
    expect(cancelled?.result).toBeUndefined();
    expect(await store.exists(repositoryKeys.snapshot(jobId))).toBe(false);

    const again = await startDataMoverProcess({ job, environment }).exited;
    expect(again.code, again.stderr).toBe(DATA_MOVER_EXIT.completed);
    expect(finalProgressOf(again)).toMatchObject({
      state: 'Completed',
      attempt: 2,
      result: {
        kind: 'block-backup',
        manifestId: jobId,
        stats: { totalBytes: nonZero.length * EBS_BLOCK_SIZE },
      },
    });
  }, 600_000);

  it('ends Cancelled with exit 3 when the job’s cancel marker appears while it runs', async () => {
    const prefix = 'marked';
    const store = storeAt(prefix);
    const jobId = uniqueName('pvc-cancel');
    const run = startDataMoverProcess({ job: backupJob({ jobId, prefix, concurrency: 1 }), environment });
    await progressWhen({
      store,
      jobId,
      process: run,
      ready: (p) => p.state === 'Running' && p.bytesDone > 0,
    });
    await store.put(
      dataMoverWorkKeys(jobId).cancel,
      JSON.stringify({ requestedAt: '2026-01-01T00:00:00.000Z', reason: 'the backup was deleted' }),
    );
    const stopped = await run.exited;

    expect(stopped.code).toBe(DATA_MOVER_EXIT.cancelled);
    expect(stopped.stderr).toContain('cancel requested at 2026-01-01T00:00:00.000Z: the backup was deleted');
    const cancelled = await progressOf(store, jobId);
    expect(cancelled).toMatchObject({ state: 'Cancelled', error: { name: 'DataMoverCancelled' } });
    expect(cancelled?.blocksDone).toBeLessThan(DATA_BLOCKS);
    expect(await store.exists(repositoryKeys.snapshot(jobId))).toBe(false);
  }, 600_000);

  it('refuses an invalid job with exit 2, naming each field, before touching anything', async () => {
    const prefix = 'invalid';
    const job = {
      ...backupJob({ jobId: 'pvc-bad', prefix, concurrency: 0 }),
      source: { snapshotId: 'vol-123' },
    };
    const exit = await startDataMoverProcess({ job, environment }).exited;

    expect(exit.code).toBe(DATA_MOVER_EXIT.invalid);
    expect(exit.stderr).toContain('source.snapshotId: expected an EBS snapshot id');
    expect(exit.stderr).toContain('concurrency:');
    expect(exit.stderr).not.toMatch(/\n\s+at /);
    expect(await storeAt(prefix).list('')).toEqual([]);
  }, 120_000);

  it('restores a backup into another account through its role, block for block, with a volume', async () => {
    const env = testEnv();
    const prefix = 'restored';
    const backupId = uniqueName('pvc-src');
    const backedUp = await startDataMoverProcess({
      job: backupJob({ jobId: backupId, prefix, concurrency: 32 }),
      environment,
    }).exited;
    expect(backedUp.code, backedUp.stderr).toBe(DATA_MOVER_EXIT.completed);

    const roleArn = `arn:aws:iam::${env.aws.accounts.dr}:role/lifeboat-restore`;
    const job = {
      kind: 'block-restore',
      jobId: uniqueName('dr-restore'),
      repository: { bucket, prefix, region: region(), kmsKeyId },
      manifestId: backupId,
      tags: { restore: 'dr-1', pvcNamespace: 'shop', pvcName: 'data' },
      target: { roleArn, externalId: 'lifeboat-data-mover', volume: { availabilityZone: 'us-east-1b' } },
      progressIntervalMs: 100,
    };
    const exit = await startDataMoverProcess({ job, environment }).exited;

    expect(exit.code, exit.stderr).toBe(DATA_MOVER_EXIT.completed);
    const done = finalProgressOf(exit);
    const result = done?.result;
    if (result?.kind !== 'block-restore')
      throw new Error(`not a block-restore result: ${JSON.stringify(result)}`);
    expect(result.blocksWritten).toBe(new Set(nonZero.map(([index]) => index)).size);
    expect(done).toMatchObject({ state: 'Completed', bytesDone: result.bytesWritten, totalKnown: true });
    const dr = {
      region: env.aws.region,
      endpoint: env.aws.endpoint,
      credentials: assumedRoleCredentials({
        region: env.aws.region,
        endpoint: env.aws.endpoint,
        credentials: awsConfig().credentials,
        roleArn,
        externalId: 'lifeboat-data-mover',
      }),
    };
    expect(await volumeHashes(snapshotBlocksFor(dr), result.snapshotId)).toEqual(
      new Map(nonZero.map(([index, data]) => [index, hashOf(data)])),
    );
    const drEc2 = new EC2Client(dr);
    const snapshot = (await drEc2.send(new DescribeSnapshotsCommand({ SnapshotIds: [result.snapshotId] })))
      .Snapshots?.[0];
    expect(snapshot).toMatchObject({ State: 'completed', OwnerId: env.aws.accounts.dr });
    expect(snapshot?.Tags).toEqual(expect.arrayContaining([{ Key: 'velero.io/restore', Value: 'dr-1' }]));
    const volume = (await drEc2.send(new DescribeVolumesCommand({ VolumeIds: [result.volumeId ?? ''] })))
      .Volumes?.[0];
    expect(volume).toMatchObject({ SnapshotId: result.snapshotId, AvailabilityZone: 'us-east-1b' });
    expect(volume?.Tags).toEqual(expect.arrayContaining([{ Key: 'velero.io/pvc-name', Value: 'data' }]));

    // The same job again: its recorded result, no second snapshot or volume.
    const again = await startDataMoverProcess({ job, environment }).exited;
    expect(again.code, again.stderr).toBe(DATA_MOVER_EXIT.completed);
    expect(finalProgressOf(again)).toEqual(done);
  }, 600_000);

  it('runs the job of a RunTask request’s container override, as ecs:runTask.sync does locally', async () => {
    const root = await mkdtemp(join(tmpdir(), 'data-mover-task-'));
    await mkdir(join(root, 'volume'));
    await writeFile(join(root, 'volume', 'notes.txt'), 'moved by the data mover');
    const job = {
      kind: 'file-backup',
      jobId: 'fs-task',
      repository: { directory: join(root, 'store'), keyFile: join(root, 'repository.key') },
      source: { path: join(root, 'volume') },
    };
    const runTask = (environment: { Name: string; Value: string }[]) => ({
      Cluster: 'arn:aws:ecs:local:000000000000:cluster/lifeboat-local',
      TaskDefinition: 'arn:aws:ecs:local:000000000000:task-definition/lifeboat-data-mover:1',
      Overrides: { ContainerOverrides: [{ Name: 'data-mover', Environment: environment }] },
    });

    const stopped = await runDataMoverTask(
      runTask([{ Name: 'LIFEBOAT_DATA_MOVER_JOB', Value: JSON.stringify(job) }]),
    );

    expect(stopped).toEqual({
      StopCode: 'EssentialContainerExited',
      LastStatus: 'STOPPED',
      Containers: [{ ExitCode: 0 }],
    });
    const store = new LocalDirectoryStore(join(root, 'store'));
    const progress = dataMoverProgress.parse(
      JSON.parse(
        Buffer.from((await store.get(dataMoverWorkKeys('fs-task').progress)) as Uint8Array).toString(),
      ),
    );
    expect(progress).toMatchObject({ state: 'Completed', result: { kind: 'file-backup', files: 1 } });
    // A task whose job is invalid fails, as the .sync state would, with the command's reason.
    await expect(
      runDataMoverTask(
        runTask([{ Name: 'LIFEBOAT_DATA_MOVER_JOB', Value: JSON.stringify({ ...job, kind: 'copy' }) }]),
      ),
    ).rejects.toThrow(/exited with 2: .*kind/);
  }, 120_000);
});
