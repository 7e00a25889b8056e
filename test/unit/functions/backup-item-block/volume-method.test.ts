/**
 * Which snapshot method a worker takes for a block's volume, against fakes of our own ports (a
 * recording snapshotter and CSI API, the directory store): an EBS volume goes CSI when the
 * cluster has a VolumeSnapshotClass for its driver (Velero with EnableCSI), else native; a CSI
 * volume of another driver without the snapshot API is skipped with the reason; a redelivered
 * block finds its EBS snapshot by tag instead of taking a second one.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backUpBlockVolumes } from '../../../../functions/backup-item-block/volumes.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import type { BlockItem } from '../../../../shared/contracts/backup-run.js';
import { blockVolumes } from '../../../../shared/contracts/backup-volumes.js';
import { backupWorkKeys } from '../../../../shared/domain/storage/keys.js';
import type { SnapshotClassFacts } from '../../../../shared/domain/volumes/csi-snapshot-class.js';
import type { Tag } from '../../../../shared/domain/volumes/ebs-volume.js';
import type { CsiSnapshots } from '../../../../shared/ports/csi-snapshots.js';
import type { SnapshotProgress, Snapshotter } from '../../../../shared/ports/snapshotter.js';

const clock = { now: () => new Date('2026-01-01T00:00:00Z') };
const backup = { name: 'nightly', runId: 'run-1' };

function item(resource: string, object: Record<string, unknown>): BlockItem {
  const meta = object.metadata as { namespace?: string; name: string };
  return {
    ref: { group: '', version: 'v1', resource, namespace: meta.namespace ?? '', name: meta.name },
    kind: String(object.kind),
    preferred: true,
    json: JSON.stringify(object),
  };
}

const claim = (volumeName: string) =>
  item('persistentvolumeclaims', {
    kind: 'PersistentVolumeClaim',
    metadata: { namespace: 'app', name: 'data' },
    spec: { volumeName },
  });
const volume = (csi: Record<string, string>) =>
  item('persistentvolumes', {
    kind: 'PersistentVolume',
    metadata: { name: 'pv-1' },
    spec: { csi, claimRef: { namespace: 'app', name: 'data' } },
  });

class RecordingSnapshotter implements Partial<Snapshotter> {
  readonly created: { volumeId: string; tags: readonly Tag[] }[] = [];
  async describeVolume(volumeId: string) {
    return {
      volumeId,
      volumeType: 'gp3',
      availabilityZone: 'us-east-1a',
      sizeGiB: 8,
      encrypted: false,
      tags: [],
    };
  }
  async findSnapshots(options: { tags: readonly Tag[] }): Promise<SnapshotProgress[]> {
    const wanted = (c: { tags: readonly Tag[] }) =>
      options.tags.every((t) => c.tags.some((x) => x.key === t.key && x.value === t.value));
    return this.created.filter(wanted).map((c, i) => ({
      snapshotId: `snap-${i}`,
      state: 'pending',
      encrypted: false,
      tags: c.tags,
      volumeId: c.volumeId,
    }));
  }
  async createSnapshot(options: { volumeId: string; tags: readonly Tag[] }) {
    this.created.push(options);
    return { snapshotId: `snap-${this.created.length - 1}` };
  }
}

class RecordingCsi implements CsiSnapshots {
  readonly created: string[] = [];
  constructor(private readonly classes: readonly SnapshotClassFacts[] | undefined) {}
  async snapshotClasses() {
    return this.classes;
  }
  async createVolumeSnapshot(options: { name: string }) {
    this.created.push(options.name);
    return { created: true, creationTimestamp: '2026-01-01T00:00:01Z' };
  }
  async readVolumeSnapshot() {
    return { exists: true };
  }
  async readVolumeSnapshotContent() {
    return undefined;
  }
  async retainContent() {}
  async deleteVolumeSnapshot(): Promise<never> {
    throw new Error('a worker never deletes VolumeSnapshots');
  }
}

async function decide(options: {
  items: BlockItem[];
  csi?: RecordingCsi;
  snapshotter?: RecordingSnapshotter;
}) {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-volumes-')));
  const snapshotter = options.snapshotter ?? new RecordingSnapshotter();
  await store.put(
    backupWorkKeys(backup).volumeSettings,
    JSON.stringify({
      cluster: 'prod',
      policy: null,
      snapshotVolumes: null,
      defaultVolumesToFsBackup: null,
      snapshotMoveData: null,
      backupLabels: {},
      backupAnnotations: {},
      csiSnapshotTimeoutSeconds: 600,
      itemOperationTimeoutSeconds: 14400,
    }),
  );
  const run = () =>
    backUpBlockVolumes({
      backup,
      blockId: 'a-0000001',
      items: options.items,
      deps: {
        store,
        clock,
        snapshotter: snapshotter as unknown as Snapshotter,
        ...(options.csi ? { csiFor: async () => options.csi as RecordingCsi } : {}),
      },
    });
  const outcome = await run();
  const raw = await store.get(backupWorkKeys(backup).blockVolumes('a-0000001'));
  const record = blockVolumes.parse(JSON.parse(Buffer.from(raw ?? '').toString('utf8')));
  return { outcome, record, snapshotter, run };
}

const ebs = { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0abc' };
const ebsClass: SnapshotClassFacts = { name: 'ebs', driver: 'ebs.csi.aws.com' };

describe('the snapshot method of a volume', () => {
  it('is CSI for an ebs.csi.aws.com volume when the cluster has a class for the driver', async () => {
    const csi = new RecordingCsi([ebsClass]);
    const { record, snapshotter } = await decide({ items: [claim('pv-1'), volume(ebs)], csi });
    expect(record.handled[0]?.decision).toMatchObject({ action: 'snapshot', method: 'csi' });
    expect(record.handled[0]?.operation).toMatchObject({
      method: 'csi',
      backupItemAction: 'velero.io/csi-volumesnapshot-backupper',
    });
    expect(csi.created).toHaveLength(1);
    expect(snapshotter.created).toEqual([]);
  });

  it('is native for an ebs.csi.aws.com volume without such a class, saying why', async () => {
    const csi = new RecordingCsi([{ name: 'other', driver: 'other.csi' }]);
    const { record, snapshotter } = await decide({ items: [claim('pv-1'), volume(ebs)], csi });
    expect(record.handled[0]?.decision).toMatchObject({
      method: 'native',
      reason: expect.stringContaining('no VolumeSnapshotClass for ebs.csi.aws.com'),
    });
    expect(snapshotter.created.map((c) => c.volumeId)).toEqual(['vol-0abc']);
    expect(csi.created).toEqual([]);
  });

  it('is skipped with the reason for another CSI driver when the cluster serves no snapshot API', async () => {
    const { record, outcome } = await decide({
      items: [claim('pv-1'), volume({ driver: 'nfs.csi.k8s.io', volumeHandle: 'share-1' })],
      csi: new RecordingCsi(undefined),
    });
    expect(record.handled[0]?.decision).toMatchObject({
      action: 'skip',
      approach: 'csiSnapshot',
      reason: expect.stringContaining('no VolumeSnapshotClass is available for CSI driver nfs.csi.k8s.io'),
    });
    expect(outcome.results.errors).toEqual({});
  });

  it('finds the EBS snapshot of an earlier delivery instead of taking a second one', async () => {
    const { snapshotter, run, record } = await decide({ items: [claim('pv-1'), volume(ebs)] });
    await run();
    expect(snapshotter.created).toHaveLength(1);
    expect(record.handled[0]?.operation?.operationId).toBe('snap-0');
  });
});
