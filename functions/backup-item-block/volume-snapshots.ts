/**
 * Starting one volume's snapshot inside an ItemBlock, between its pre and post hooks: a native
 * EBS snapshot (velero-plugin-for-aws CreateSnapshot, tagged as Velero tags it) or a CSI
 * VolumeSnapshot (Velero's PVC action, its class chosen as Velero chooses it). Never waits for
 * completion: it records an operation that VolumeOperations polls. Idempotent: a redelivered
 * message finds the EBS snapshot it started by its tags, and the VolumeSnapshot by its name.
 * A refusal (CloudRequestRefused, a missing class) becomes the volume's error; a transient
 * failure (RetryableError) is thrown so the message is delivered again.
 */
import { createHash } from 'node:crypto';
import type { HandledVolumeRecord, VolumeSettings } from '../../shared/contracts/backup-volumes.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { chooseSnapshotClass } from '../../shared/domain/volumes/csi-snapshot-class.js';
import { availabilityZoneOf, snapshotTags, type Tag } from '../../shared/domain/volumes/ebs-volume.js';
import { kubeTime } from '../../shared/domain/volumes/info.js';
import { CSI_SNAPSHOT_ACTION, EBS_SNAPSHOT_ACTION } from '../../shared/domain/volumes/operations.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { CsiSnapshots } from '../../shared/ports/csi-snapshots.js';
import type { Snapshotter, VolumeDescription } from '../../shared/ports/snapshotter.js';

type KubeObject = Readonly<Record<string, unknown>>;
const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const stringMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(record(v)).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
/** Transient failures are thrown (the message is retried); anything else is the volume's error. */
const rethrowIfRetryable = (error: unknown): void => {
  if (error instanceof LifeboatError && error.retryable) throw error;
  if (!(error instanceof LifeboatError)) throw error;
};

export interface SnapshotStartDeps {
  readonly snapshotter?: Snapshotter;
  readonly csi?: CsiSnapshots;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

type Started = Pick<HandledVolumeRecord, 'native' | 'csi' | 'error' | 'startedAt' | 'operation'>;

/** A native EBS snapshot of the PV's volume (found again by its tags when already started). */
export async function startNativeSnapshot(options: {
  backupName: string;
  settings: VolumeSettings;
  pv: KubeObject;
  volumeId: string;
  deps: SnapshotStartDeps;
}): Promise<Started> {
  const { backupName, settings, pv, volumeId, deps } = options;
  const pvName = text(record(pv.metadata).name);
  const now = deps.clock.now();
  const { snapshotter, signal } = deps;
  if (!snapshotter) {
    return {
      native: undescribedVolume(pv, volumeId),
      error: 'no EBS snapshotter is configured for this backup (EC2 access is needed for native snapshots)',
      startedAt: now.toISOString(),
    };
  }
  let volume: VolumeDescription;
  try {
    volume = await snapshotter.describeVolume(volumeId, signal ? { signal } : {});
  } catch (error) {
    rethrowIfRetryable(error);
    return { native: undescribedVolume(pv, volumeId), error: message(error), startedAt: now.toISOString() };
  }
  const native = {
    volumeId,
    volumeType: volume.volumeType,
    ...(volume.iops === undefined ? {} : { iops: volume.iops }),
    // Velero records the zone from the PV; the volume's own zone when the PV names none.
    availabilityZone: availabilityZoneOf(pv) || volume.availabilityZone,
  };
  const { tags, dropped } = snapshotTags({
    backupName,
    backupLabels: settings.backupLabels,
    pvName,
    volumeTags: volume.tags,
  });
  let snapshot: { snapshotId: string; startTime: Date | undefined };
  try {
    snapshot = await findOrCreateSnapshot({ snapshotter, volumeId, tags, signal });
  } catch (error) {
    rethrowIfRetryable(error);
    return { native, error: message(error), startedAt: now.toISOString() };
  }
  const { snapshotId } = snapshot;
  const startedAt = (snapshot.startTime ?? now).toISOString();
  return {
    native: { ...native, snapshotId, ...(dropped.length > 0 ? { droppedTags: dropped } : {}) },
    startedAt,
    operation: {
      operationId: snapshotId,
      method: 'native',
      backupItemAction: EBS_SNAPSHOT_ACTION,
      resource: { Group: '', Resource: 'persistentvolumes', Namespace: '', Name: pvName },
      postOperationItems: [],
      createdAt: startedAt,
    },
  };
}

/** What is known of a volume EC2 did not describe: its id, and the zone the PV names. */
function undescribedVolume(pv: KubeObject, volumeId: string): NonNullable<Started['native']> {
  return { volumeId, volumeType: '', availabilityZone: availabilityZoneOf(pv) ?? '' };
}

/**
 * The snapshot an earlier delivery of the message started (found by its backup and PV tags), or
 * a new one: a redelivered message never takes a second snapshot.
 */
async function findOrCreateSnapshot(options: {
  snapshotter: Snapshotter;
  volumeId: string;
  tags: readonly Tag[];
  signal: AbortSignal | undefined;
}): Promise<{ snapshotId: string; startTime: Date | undefined }> {
  const { snapshotter, volumeId, tags, signal } = options;
  const identity = tags.filter((t) => t.key === 'velero.io/backup' || t.key === 'velero.io/pv');
  const earlier = (await snapshotter.findSnapshots({ tags: identity, ...(signal ? { signal } : {}) })).find(
    (s) => s.volumeId === undefined || s.volumeId === volumeId,
  );
  if (earlier) return { snapshotId: earlier.snapshotId, startTime: earlier.startTime };
  const created = await snapshotter.createSnapshot({ volumeId, tags, ...(signal ? { signal } : {}) });
  return { snapshotId: created.snapshotId, startTime: created.startTime };
}

/**
 * The VolumeSnapshot a backup creates for a PVC: `velero-<pvc>-<hash>` (Velero's generateName
 * prefix), the hash of backup and PVC making the name the same on every attempt.
 */
export function volumeSnapshotName(options: { backupName: string; pvcName: string }): string {
  const hash = createHash('sha256')
    .update(`${options.backupName}\n${options.pvcName}`)
    .digest('hex')
    .slice(0, 10);
  const prefix = `velero-${options.pvcName}`.slice(0, 253 - hash.length - 1).replace(/[-.]+$/, '');
  return `${prefix}-${hash}`;
}

/** A CSI VolumeSnapshot of the PVC, with the class Velero would choose. */
export async function startCsiSnapshot(options: {
  backupName: string;
  settings: VolumeSettings;
  pvc: KubeObject;
  driver: string;
  classes: Parameters<typeof chooseSnapshotClass>[0]['classes'];
  deps: SnapshotStartDeps & { csi: CsiSnapshots };
}): Promise<Started> {
  const { backupName, settings, pvc, driver, deps } = options;
  const meta = record(pvc.metadata);
  const namespace = text(meta.namespace);
  const pvcName = text(meta.name);
  const now = deps.clock.now();
  const choice = chooseSnapshotClass({
    driver,
    classes: options.classes,
    backupAnnotations: settings.backupAnnotations,
    pvcAnnotations: stringMap(meta.annotations),
  });
  if (!choice.ok) {
    return {
      csi: { volumeSnapshotNamespace: namespace, driver },
      error: choice.reason,
      startedAt: now.toISOString(),
    };
  }
  const name = volumeSnapshotName({ backupName, pvcName });
  let creationTimestamp: string | undefined;
  try {
    const created = await deps.csi.createVolumeSnapshot({
      namespace,
      name,
      pvcName,
      className: choice.className,
      // Velero: the PVC's labels plus velero.io/backup-name.
      labels: { ...stringMap(meta.labels), 'velero.io/backup-name': backupName },
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    creationTimestamp = created.creationTimestamp;
  } catch (error) {
    rethrowIfRetryable(error);
    return {
      csi: { volumeSnapshotNamespace: namespace, driver, className: choice.className },
      error: message(error),
      startedAt: now.toISOString(),
    };
  }
  const startedAt = creationTimestamp ?? now.toISOString();
  return {
    csi: {
      volumeSnapshotNamespace: namespace,
      volumeSnapshotName: name,
      driver,
      className: choice.className,
    },
    startedAt,
    operation: csiOperation({ namespace, name, startedAt }),
  };
}

/** The operation VolumeOperations polls for a VolumeSnapshot created at `startedAt`. */
function csiOperation(options: { namespace: string; name: string; startedAt: string }): Started['operation'] {
  const { namespace, name, startedAt } = options;
  return {
    // Velero: <namespace>/<volumesnapshot>/<started time, RFC 3339>.
    operationId: `${namespace}/${name}/${kubeTime(startedAt)}`,
    method: 'csi',
    backupItemAction: CSI_SNAPSHOT_ACTION,
    resource: {
      Group: 'snapshot.storage.k8s.io',
      Resource: 'volumesnapshots',
      Namespace: namespace,
      Name: name,
    },
    postOperationItems: [
      { Group: 'snapshot.storage.k8s.io', Resource: 'volumesnapshots', Namespace: namespace, Name: name },
    ],
    createdAt: startedAt,
  };
}
