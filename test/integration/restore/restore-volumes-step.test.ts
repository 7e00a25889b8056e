/**
 * The RestoreVolumes step on its own, against moto's EC2: a call that lost its progress (a
 * retried Lambda) finds the volume its first attempt created by its restore tags instead of
 * creating another, and a snapshot EC2 refuses leaves its PV out of the phase, as an error.
 */
import { CreateVolumeCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { restoreVolumes } from '../../../functions/restore-volumes/restore-volumes.js';
import { restoreVolumeResults } from '../../../functions/restore-volumes/volume-results.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { systemClock } from '../../../shared/adapters/system-clock.js';
import type { PlannedItem, RestoreRun } from '../../../shared/contracts/restore-run.js';
import type { VolumePlan } from '../../../shared/contracts/restore-volumes.js';
import { restoreWorkKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { tempStore } from '../backup/support.js';
import { awsConfig, uniqueName } from '../support/env.js';

const ec2 = (): EC2Client => new EC2Client({ ...awsConfig(), maxAttempts: 3 });

function plannedPv(name: string): PlannedItem {
  return {
    groupResource: 'persistentvolumes',
    sourceNamespace: '',
    object: {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: '' }, capacity: { storage: '8Gi' } },
    },
  };
}

/** The working data PlanRestore leaves: the request, the volume plan and the PV chunk. */
async function planned(store: ObjectStore, run: RestoreRun, volumes: VolumePlan['native']): Promise<void> {
  const work = restoreWorkKeys(run);
  await store.put(
    work.request,
    JSON.stringify({
      cluster: run.cluster,
      restore: { metadata: { name: run.name }, spec: { backupName: run.backupName } },
    }),
  );
  const plan: VolumePlan = { native: volumes, provisioned: [], restoreInfos: [], log: [] };
  await store.put(work.volumes, JSON.stringify(plan));
  await store.put(
    work.chunk('persistentvolumes', 0),
    JSON.stringify(volumes.map((v) => plannedPv(v.pvName))),
  );
}

async function chunk(store: ObjectStore, run: RestoreRun): Promise<PlannedItem[]> {
  const raw = await store.get(restoreWorkKeys(run).chunk('persistentvolumes', 0));
  return JSON.parse(Buffer.from(raw ?? []).toString('utf8')) as PlannedItem[];
}

describe('RestoreVolumes', () => {
  const region = awsConfig().region;
  const runOf = (): RestoreRun => ({
    name: uniqueName('rv-step'),
    backupName: 'b',
    cluster: 'target',
    runId: uniqueName('run'),
    startedAt: new Date().toISOString(),
    dryRun: false,
  });

  it('finds the volume an earlier attempt created instead of creating a second one', async () => {
    const snapshotter = new EbsSnapshotter({ client: ec2() });
    const source = await ec2().send(
      new CreateVolumeCommand({ AvailabilityZone: `${region}a`, Size: 4, VolumeType: 'gp3' }),
    );
    const { snapshotId } = await snapshotter.createSnapshot({
      volumeId: source.VolumeId ?? '',
      tags: [{ key: 'velero.io/backup', value: 'b' }],
    });
    const store = await tempStore();
    const run = runOf();
    const pvName = uniqueName('pv');
    await planned(store, run, [
      {
        pvName,
        sourcePvName: pvName,
        snapshotHandle: snapshotId,
        volumeType: 'gp3',
        availabilityZone: `${region}c`,
        recordedAvailabilityZone: `${region}a`,
      },
    ]);
    const deps = { store, snapshotter, clock: systemClock, pollWithinMs: 5_000, pollIntervalMs: 100 };

    expect(await restoreVolumes({ run }, deps)).toEqual({ done: true, pending: 0, waitSeconds: 0 });
    const first = (await chunk(store, run))[0]?.object as { spec: { csi: { volumeHandle: string } } };
    expect(first.spec.csi.volumeHandle).toMatch(/^vol-/);

    // A retry that lost every trace of the first attempt but the volume itself.
    await store.delete(restoreWorkKeys(run).volumesProgress);
    await planned(store, run, [
      {
        pvName,
        sourcePvName: pvName,
        snapshotHandle: snapshotId,
        volumeType: 'gp3',
        availabilityZone: `${region}c`,
        recordedAvailabilityZone: `${region}a`,
      },
    ]);
    expect(await restoreVolumes({ run }, deps)).toMatchObject({ done: true });
    const second = (await chunk(store, run))[0]?.object as { spec: { csi: { volumeHandle: string } } };
    expect(second.spec.csi.volumeHandle).toBe(first.spec.csi.volumeHandle);
    const tagged = await ec2().send(
      new DescribeVolumesCommand({ Filters: [{ Name: 'tag:velero.io/restore', Values: [run.name] }] }),
    );
    expect(tagged.Volumes?.map((v) => [v.VolumeId, v.AvailabilityZone])).toEqual([
      [first.spec.csi.volumeHandle, `${region}c`],
    ]);
    // A call after completion changes nothing.
    expect(await restoreVolumes({ run }, deps)).toEqual({ done: true, pending: 0, waitSeconds: 0 });
  });

  it('leaves out the PV of a snapshot EC2 refuses, as an error of the restore', async () => {
    const store = await tempStore();
    const run = runOf();
    const pvName = uniqueName('pv');
    await planned(store, run, [
      {
        pvName,
        sourcePvName: pvName,
        snapshotHandle: 'snap-0000000000000dead',
        volumeType: 'gp3',
        availabilityZone: `${region}a`,
        recordedAvailabilityZone: `${region}a`,
      },
    ]);
    const snapshotter = new EbsSnapshotter({ client: ec2() });
    const result = await restoreVolumes(
      { run },
      { store, snapshotter, clock: systemClock, pollWithinMs: 2_000, pollIntervalMs: 100 },
    );
    expect(result).toMatchObject({ done: true });
    expect(await chunk(store, run)).toEqual([]);
    const { infos, results } = await restoreVolumeResults({ store, run });
    expect(infos).toEqual([{ pvName, snapshotDataMoved: false }]);
    expect(JSON.stringify(results.errors.cluster)).toContain(`PersistentVolume ${pvName}: Could not restore`);
  });
});
