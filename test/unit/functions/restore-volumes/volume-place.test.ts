/**
 * RestoreVolumes creates a native volume where the request sends it (volumeRegion,
 * volumeAccountRoleArn): through the snapshotter of that place, which also tags and waits for
 * it; the PV then points at the new volume. Fakes behind the Snapshotter port; the directory store.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { restoreVolumes } from '../../../../functions/restore-volumes/restore-volumes.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import type { PlannedItem, RestoreRun } from '../../../../shared/contracts/restore-run.js';
import type { VolumePlan } from '../../../../shared/contracts/restore-volumes.js';
import { restoreWorkKeys } from '../../../../shared/domain/storage/keys.js';
import type { Snapshotter, VolumePlace } from '../../../../shared/ports/snapshotter.js';

const ROLE = 'arn:aws:iam::210987654321:role/lifeboat-restore';

/** EC2 in one place: records the volumes it creates, each available at once. */
function fakeSnapshotter(made: { snapshotId: string; availabilityZone: string; kmsKeyId?: string }[]) {
  const unused = (): never => {
    throw new Error('not used by RestoreVolumes');
  };
  const snapshotter: Snapshotter = {
    describeVolume: unused,
    createSnapshot: unused,
    findSnapshots: unused,
    snapshotProgress: unused,
    deleteSnapshot: unused,
    createVolumeFromSnapshot: async (o) => {
      made.push({
        snapshotId: o.snapshotId,
        availabilityZone: o.availabilityZone,
        ...(o.kmsKeyId ? { kmsKeyId: o.kmsKeyId } : {}),
      });
      return { volumeId: `vol-${made.length}` };
    },
    findVolumes: async () => [],
    volumeStatus: async (volumeId) => ({ volumeId, state: 'available', availabilityZone: 'us-west-2b' }),
  };
  return snapshotter;
}

const run: RestoreRun = {
  name: 'dr-restore',
  backupName: 'b',
  cluster: 'dr',
  runId: 'run-1',
  startedAt: '2026-11-28T00:00:00Z',
  dryRun: false,
};

async function planned(spec: Record<string, unknown>): Promise<LocalDirectoryStore> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'rv-place-')));
  const work = restoreWorkKeys(run);
  await store.put(
    work.request,
    JSON.stringify({ cluster: 'dr', restore: { metadata: { name: run.name }, spec } }),
  );
  const plan: VolumePlan = {
    native: [
      {
        pvName: 'pv-1',
        sourcePvName: 'pv-1',
        snapshotHandle: 'snap-copy',
        volumeType: 'gp3',
        availabilityZone: 'us-west-2b',
        recordedAvailabilityZone: 'us-east-1a',
      },
    ],
    provisioned: [],
    restoreInfos: [],
    log: [],
  };
  await store.put(work.volumes, JSON.stringify(plan));
  const pv: PlannedItem = {
    groupResource: 'persistentvolumes',
    sourceNamespace: '',
    object: {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-1' },
      spec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: '' } },
    },
  };
  await store.put(work.chunk('persistentvolumes', 0), JSON.stringify([pv]));
  return store;
}

async function pvHandle(store: LocalDirectoryStore): Promise<unknown> {
  const raw = await store.get(restoreWorkKeys(run).chunk('persistentvolumes', 0));
  const [pv] = JSON.parse(Buffer.from(raw ?? []).toString('utf8')) as PlannedItem[];
  return (pv?.object.spec as { csi?: { volumeHandle?: string } } | undefined)?.csi?.volumeHandle;
}

const clock = { now: () => new Date('2026-11-28T00:00:01Z') };

describe('RestoreVolumes in the place the request names', () => {
  it('creates, waits for and points the PV at the volume through that place’s snapshotter', async () => {
    // Prepare
    const store = await planned({
      backupName: 'b',
      volumeRegion: 'us-west-2',
      volumeAvailabilityZone: 'us-west-2b',
      volumeAccountRoleArn: ROLE,
      volumeAccountExternalId: 'dr-ext',
      volumeKmsKeyId: 'arn:aws:kms:us-west-2:210987654321:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0',
    });
    const own: { snapshotId: string; availabilityZone: string }[] = [];
    const there: { snapshotId: string; availabilityZone: string; kmsKeyId?: string }[] = [];
    const places: VolumePlace[] = [];

    // Act
    const result = await restoreVolumes(
      { run },
      {
        store,
        clock,
        snapshotter: fakeSnapshotter(own),
        snapshotterAt: (place) => {
          places.push(place);
          return fakeSnapshotter(there);
        },
        pollIntervalMs: 1,
      },
    );

    // Assess
    expect(result).toEqual({ done: true, pending: 0, waitSeconds: 0 });
    expect(places).toEqual([{ region: 'us-west-2', roleArn: ROLE, externalId: 'dr-ext' }]);
    expect(own).toEqual([]);
    expect(there).toEqual([
      {
        snapshotId: 'snap-copy',
        availabilityZone: 'us-west-2b',
        kmsKeyId: 'arn:aws:kms:us-west-2:210987654321:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0',
      },
    ]);
    expect(await pvHandle(store)).toBe('vol-1');
  });

  it('uses its own EC2 when the request names no other place', async () => {
    const store = await planned({ backupName: 'b' });
    const own: { snapshotId: string; availabilityZone: string }[] = [];
    await restoreVolumes(
      { run },
      {
        store,
        clock,
        snapshotter: fakeSnapshotter(own),
        snapshotterAt: () => {
          throw new Error('no other place');
        },
        pollIntervalMs: 1,
      },
    );
    expect(own.map((v) => v.snapshotId)).toEqual(['snap-copy']);
    expect(await pvHandle(store)).toBe('vol-1');
  });

  it('leaves the PV out, naming the place, when it cannot reach it', async () => {
    const store = await planned({
      backupName: 'b',
      volumeRegion: 'us-west-2',
      volumeAvailabilityZone: 'us-west-2b',
    });
    await restoreVolumes({ run }, { store, clock, snapshotter: fakeSnapshotter([]), pollIntervalMs: 1 });
    const raw = await store.get(restoreWorkKeys(run).volumesProgress);
    const progress = JSON.parse(Buffer.from(raw ?? []).toString('utf8')) as {
      volumes: Record<string, { error?: string }>;
    };
    expect(progress.volumes['pv-1']?.error).toBe(
      'this restore has no EC2 access in region us-west-2 to create volumes from native snapshots there',
    );
    expect(await store.get(restoreWorkKeys(run).chunk('persistentvolumes', 0)).then((b) => String(b))).toBe(
      '[]',
    );
  });
});
