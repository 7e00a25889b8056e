import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { advanceMovements, gatherMovements } from '../../../../functions/volume-operations/data-movements.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import type { BlockVolumes, OperationStatus } from '../../../../shared/contracts/backup-volumes.js';
import type { DataMoverProgress } from '../../../../shared/contracts/data-mover-job.js';
import { CloudRequestRefused } from '../../../../shared/domain/errors.js';
import { backupKeys, dataMoverWorkKeys, repositoryKeys } from '../../../../shared/domain/storage/keys.js';
import type { Snapshotter } from '../../../../shared/ports/snapshotter.js';

const repository = { directory: '/repo', keyFile: '/key' };
const now = new Date('2026-01-03T00:00:00.000Z');
const operation = {
  operationId: 'snap-0b',
  method: 'native' as const,
  backupItemAction: 'lifeboat.io/ebs-volume-snapshotter',
  resource: { Group: '', Resource: 'persistentvolumes', Namespace: '', Name: 'pv-data' },
  postOperationItems: [],
  createdAt: '2026-01-03T00:00:00.000Z',
};
const blocks: BlockVolumes[] = [
  {
    claims: [],
    persistentVolumes: [],
    handled: [
      {
        pvName: 'pv-data',
        pvcNamespace: 'shop',
        pvcName: 'data',
        decision: { action: 'snapshot', method: 'native', ebsVolumeId: 'vol-1', moveData: true, reason: 'r' },
        native: {
          volumeId: 'vol-1',
          volumeType: 'gp3',
          availabilityZone: 'us-east-1a',
          snapshotId: 'snap-0b',
        },
        operation,
      },
      {
        pvName: 'pv-files',
        pvcNamespace: 'shop',
        pvcName: 'files',
        decision: {
          action: 'fs-backup',
          pod: { namespace: 'shop', name: 'db', volumeName: 'files' },
          reason: 'r',
        },
        files: { path: '/mnt/files' },
        startedAt: '2026-01-03T00:00:01.000Z',
      },
      {
        pvName: 'pv-plain',
        decision: {
          action: 'snapshot',
          method: 'native',
          ebsVolumeId: 'vol-2',
          moveData: false,
          reason: 'r',
        },
      },
    ],
  },
];
const completed: OperationStatus = { phase: 'Completed' };

/** EC2 as VolumeOperations uses it for movements: deleting superseded bases. */
class FakeEc2 implements Pick<Snapshotter, 'deleteSnapshot'> {
  readonly deleted: string[] = [];
  constructor(private readonly refuse = false) {}
  async deleteSnapshot(id: string): Promise<void> {
    if (this.refuse) throw new CloudRequestRefused('not authorized', { code: 'UnauthorizedOperation' });
    this.deleted.push(id);
  }
}

async function setUp() {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'movements-')));
  // An earlier backup of vol-1, finished, which kept snap-0a as its base.
  const parent = 'mon_vol-1_20260101T000000Z';
  await store.put(repositoryKeys.snapshot(parent), '{}');
  await store.put(repositoryKeys.snapshot('mon_vol-9_20260101T000000Z'), '{}');
  await store.put(
    backupKeys('mon').volumeInfo,
    gzipSync(
      JSON.stringify([{ snapshotDataMovementInfo: { snapshotHandle: parent, retainedSnapshot: 'snap-0a' } }]),
    ),
  );
  return { store, parent };
}

const doc = (jobId: string, extra: Partial<DataMoverProgress>): DataMoverProgress => ({
  jobId,
  kind: 'block-backup',
  state: 'Completed',
  phase: 'done',
  attempt: 1,
  startedAt: '2026-01-03T00:01:00.000Z',
  updatedAt: '2026-01-03T00:02:00.000Z',
  bytesDone: 1024,
  bytesTotal: 1024,
  totalKnown: true,
  ...extra,
});

describe('the data movements of a backup', () => {
  it('are gathered for snapshotMoveData snapshots and reachable fs-backup volumes only, named by backup, volume and time', () => {
    expect(gatherMovements({ blocks, backupName: 'tue', now })).toEqual([
      {
        key: 'snapshot:snap-0b',
        jobId: 'tue_vol-1_20260103T000000Z',
        mode: 'block',
        state: 'Waiting',
        created: now.toISOString(),
      },
      {
        key: 'files:pv-files:shop/files',
        jobId: 'tue_pv.pv-files_20260103T000001Z',
        mode: 'file',
        state: 'Waiting',
        created: now.toISOString(),
      },
    ]);
  });

  it('start once the snapshot completed, incremental against the newest earlier manifest of the volume', async () => {
    const { store, parent } = await setUp();
    const movements = gatherMovements({ blocks, backupName: 'tue', now });
    const args = {
      movements,
      blocks,
      backup: { name: 'tue' },
      store,
      now,
      dataMover: { repository, region: 'us-east-1' },
    };
    // The snapshot still runs: only the file job can start.
    const first = await advanceMovements({
      ...args,
      statuses: new Map([['snap-0b', { phase: 'InProgress' }]]),
    });
    expect(first.map((j) => j.kind)).toEqual(['file-backup']);
    const jobs = await advanceMovements({ ...args, statuses: new Map([['snap-0b', completed]]) });
    // The file job, not run yet, is handed out again.
    expect(jobs).toEqual([
      {
        kind: 'block-backup',
        jobId: 'tue_vol-1_20260103T000000Z',
        manifestId: 'tue_vol-1_20260103T000000Z',
        repository,
        tags: { backup: 'tue', pvcNamespace: 'shop', pvcName: 'data' },
        source: { snapshotId: 'snap-0b', volumeId: 'vol-1', region: 'us-east-1', parentManifestId: parent },
      },
      {
        kind: 'file-backup',
        jobId: 'tue_pv.pv-files_20260103T000001Z',
        manifestId: 'tue_pv.pv-files_20260103T000001Z',
        repository,
        tags: { backup: 'tue', pvcNamespace: 'shop', pvcName: 'files' },
        source: { path: '/mnt/files' },
      },
    ]);
    expect(movements[0]).toMatchObject({ state: 'Ready', parentManifestId: parent, supersedes: 'snap-0a' });
  });

  it('settle from the jobs’ documents once the state machine reports them run, deleting the superseded base', async () => {
    const { store } = await setUp();
    const movements = gatherMovements({ blocks, backupName: 'tue', now });
    const ec2 = new FakeEc2();
    const args = {
      movements,
      blocks,
      backup: { name: 'tue' },
      store,
      now,
      dataMover: { repository },
      snapshotter: ec2 as unknown as Snapshotter,
      statuses: new Map([['snap-0b', completed]]),
    };
    await advanceMovements(args);
    const [block, file] = movements;
    await store.put(
      dataMoverWorkKeys(block?.jobId ?? '').progress,
      JSON.stringify(
        doc(block?.jobId ?? '', {
          result: {
            kind: 'block-backup',
            manifestId: block?.jobId ?? '',
            snapshotId: 'snap-0b',
            incremental: true,
            volumeSizeBytes: 8 * 1024 ** 3,
            stats: {
              totalBytes: 1024,
              bytesRead: 512,
              rawBytesStored: 512,
              storedBytes: 300,
              blobsDeduplicated: 0,
            },
            run: { blocksRead: 1, bytesRead: 512, resumedAtBlock: 0, alreadyStored: false },
          },
        }),
      ),
    );
    await store.put(
      dataMoverWorkKeys(file?.jobId ?? '').progress,
      JSON.stringify(
        doc(file?.jobId ?? '', {
          kind: 'file-backup',
          state: 'Failed',
          error: { name: 'ValidationFailed', message: 'source.path: not a directory', retryable: false },
        }),
      ),
    );
    const again = await advanceMovements({
      ...args,
      moved: [{ jobId: block?.jobId ?? '' }, { jobId: file?.jobId ?? '', error: 'States.TaskFailed' }],
    });
    expect(again).toEqual([]);
    expect(block).toEqual({
      key: 'snapshot:snap-0b',
      jobId: 'tue_vol-1_20260103T000000Z',
      mode: 'block',
      state: 'Completed',
      created: now.toISOString(),
      started: '2026-01-03T00:01:00.000Z',
      updated: '2026-01-03T00:02:00.000Z',
      parentManifestId: 'mon_vol-1_20260101T000000Z',
      supersedes: 'snap-0a',
      manifestId: 'tue_vol-1_20260103T000000Z',
      size: 8 * 1024 ** 3,
      bytesDone: 1024,
      bytesRead: 512,
      storedBytes: 300,
      incremental: true,
      retainedSnapshot: 'snap-0b',
      note: {
        level: 'info',
        message:
          "Deleted snapshot snap-0a, the incremental base of manifest mon_vol-1_20260101T000000Z: snap-0b is the volume's base now",
      },
    });
    expect(ec2.deleted).toEqual(['snap-0a']);
    expect(file).toMatchObject({ state: 'Failed', error: 'source.path: not a directory' });
  });

  it('fail a movement whose job ran without a document, whose snapshot failed, or that has no data mover', async () => {
    const { store } = await setUp();
    const movements = gatherMovements({ blocks, backupName: 'tue', now });
    await advanceMovements({
      movements,
      blocks,
      backup: { name: 'tue' },
      store,
      now,
      statuses: new Map([['snap-0b', { phase: 'Failed', error: 'EBS snapshot snap-0b failed' }]]),
    });
    expect(movements.map((m) => [m.state, m.error])).toEqual([
      ['Failed', 'its data cannot be moved: its snapshot did not complete'],
      ['Failed', expect.stringMatching(/^this run has no data mover/)],
    ]);
    const ready = gatherMovements({ blocks, backupName: 'tue', now });
    const args = {
      movements: ready,
      blocks,
      backup: { name: 'tue' },
      store,
      now,
      dataMover: { repository },
      statuses: new Map([['snap-0b', completed]]),
    };
    await advanceMovements(args);
    await advanceMovements({
      ...args,
      moved: ready.map((m) => ({ jobId: m.jobId, error: 'States.TaskFailed' })),
    });
    expect(ready.map((m) => m.error)).toEqual([
      'the data mover task failed (States.TaskFailed) without recording why',
      'the data mover task failed (States.TaskFailed) without recording why',
    ]);
  });

  it('keep the superseded base, with a warning, when EC2 refuses to delete it', async () => {
    const { store } = await setUp();
    const movements = gatherMovements({ blocks, backupName: 'tue', now }).slice(0, 1);
    const args = {
      movements,
      blocks,
      backup: { name: 'tue' },
      store,
      now,
      dataMover: { repository },
      snapshotter: new FakeEc2(true) as unknown as Snapshotter,
      statuses: new Map([['snap-0b', completed]]),
    };
    await advanceMovements(args);
    const jobId = movements[0]?.jobId ?? '';
    await store.put(
      dataMoverWorkKeys(jobId).progress,
      JSON.stringify(
        doc(jobId, {
          result: {
            kind: 'block-backup',
            manifestId: jobId,
            snapshotId: 'snap-0b',
            incremental: true,
            volumeSizeBytes: 1,
            stats: { totalBytes: 1, bytesRead: 0, rawBytesStored: 0, storedBytes: 0, blobsDeduplicated: 0 },
            run: { blocksRead: 0, bytesRead: 0, resumedAtBlock: 0, alreadyStored: false },
          },
        }),
      ),
    );
    await advanceMovements({ ...args, moved: [{ jobId }] });
    expect(movements[0]?.note).toEqual({
      level: 'warning',
      message:
        'Kept snapshot snap-0a, the former incremental base of manifest mon_vol-1_20260101T000000Z: not authorized',
    });
  });
});
