/**
 * The snapshot half of the test environment's stand-in EBS CSI driver (ebs-csi-driver.ts): what
 * the snapshot-controller and external-snapshotter do for one driver in one account and region.
 * A VolumeSnapshot of a PVC (`source.persistentVolumeClaimName`) gets an EBS snapshot of the PV's
 * volume and a bound VolumeSnapshotContent `snapcontent-<uid>`; a VolumeSnapshot bound to a
 * pre-provisioned content (`source.volumeSnapshotContentName`, `snapshotHandle` an EBS snapshot
 * id) is checked against EC2 of that account and region. Either becomes readyToUse once the EBS
 * snapshot is `completed`, or gets an error status (as external-snapshotter reports one) when the
 * snapshot is not there. Only statuses and its own contents are written.
 */
import {
  CreateSnapshotCommand,
  DescribeSnapshotsCommand,
  type EC2Client,
  type Snapshot,
} from '@aws-sdk/client-ec2';
import type { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';

export type Obj = Record<string, unknown>;
export const record = (v: unknown): Obj =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
export const text = (v: unknown): string => (typeof v === 'string' ? v : '');

export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';
const version = 'v1';
const GiB = 2 ** 30;

/** What both halves of the driver share: clients of the cluster and of EC2, and what is served. */
export interface DriverContext {
  readonly driver: string;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly ec2: EC2Client;
  /** Whether objects of this namespace are served (other tests share the cluster). */
  readonly serves: (namespace: string) => boolean;
}

/** A VolumeSnapshotError, as external-snapshotter writes one into a status. */
const errorStatus = (message: string): Obj => ({ time: new Date().toISOString(), message });

/** The EBS snapshot with this id in the driver's account and region, if there is one. */
export async function findSnapshot(ctx: DriverContext, snapshotId: string): Promise<Snapshot | undefined> {
  try {
    const found = await ctx.ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [snapshotId] }));
    return found.Snapshots?.[0];
  } catch (error) {
    const name = (error as { name?: unknown }).name;
    if (name === 'InvalidSnapshot.NotFound' || name === 'InvalidSnapshotID.Malformed') return undefined;
    throw error;
  }
}

async function content(ctx: DriverContext, name: string): Promise<Obj | undefined> {
  try {
    return record(
      await ctx.custom.getClusterCustomObject({
        group: SNAPSHOT_GROUP,
        version,
        plural: 'volumesnapshotcontents',
        name,
      }),
    );
  } catch (error) {
    if ((error as { code?: unknown }).code === 404) return undefined;
    throw error;
  }
}

async function classDriver(ctx: DriverContext, className: string): Promise<string> {
  const cls = record(
    await ctx.custom.getClusterCustomObject({
      group: SNAPSHOT_GROUP,
      version,
      plural: 'volumesnapshotclasses',
      name: className,
    }),
  );
  return text(cls.driver);
}

async function setStatuses(
  ctx: DriverContext,
  options: { vs: Obj; content: Obj; contentStatus: Obj; snapshotStatus: Obj },
): Promise<void> {
  const meta = record(options.vs.metadata);
  await ctx.custom.replaceClusterCustomObjectStatus({
    group: SNAPSHOT_GROUP,
    version,
    plural: 'volumesnapshotcontents',
    name: text(record(options.content.metadata).name),
    body: { ...options.content, status: options.contentStatus },
  });
  await ctx.custom.replaceNamespacedCustomObjectStatus({
    group: SNAPSHOT_GROUP,
    version,
    namespace: text(meta.namespace),
    plural: 'volumesnapshots',
    name: text(meta.name),
    body: { ...options.vs, status: options.snapshotStatus },
  });
}

/** Both statuses from the EBS snapshot behind the content: ready once completed, an error when missing. */
async function settle(ctx: DriverContext, vs: Obj, bound: Obj): Promise<void> {
  // Pre-provisioned: the handle is the content's source; dynamic: the status the driver set.
  const handle =
    text(record(record(bound.spec).source).snapshotHandle) || text(record(bound.status).snapshotHandle);
  const contentName = text(record(bound.metadata).name);
  const snapshot = await findSnapshot(ctx, handle);
  if (!snapshot || snapshot.State === 'error') {
    const message = snapshot
      ? `Failed to check and update snapshot content: snapshot ${handle} is in state error`
      : `Failed to check and update snapshot content: snapshot ${handle} not found in the driver's account and region`;
    await setStatuses(ctx, {
      vs,
      content: bound,
      contentStatus: { ...record(bound.status), readyToUse: false, error: errorStatus(message) },
      snapshotStatus: {
        boundVolumeSnapshotContentName: contentName,
        readyToUse: false,
        error: errorStatus(message),
      },
    });
    return;
  }
  const ready = snapshot.State === 'completed';
  const sizeBytes = (snapshot.VolumeSize ?? 0) * GiB;
  const created = snapshot.StartTime ?? new Date();
  await setStatuses(ctx, {
    vs,
    content: bound,
    contentStatus: {
      snapshotHandle: handle,
      readyToUse: ready,
      restoreSize: sizeBytes,
      creationTime: created.getTime() * 1e6,
    },
    snapshotStatus: {
      boundVolumeSnapshotContentName: contentName,
      readyToUse: ready,
      restoreSize: `${snapshot.VolumeSize ?? 0}Gi`,
      creationTime: created.toISOString(),
    },
  });
}

/** A pre-provisioned content bound to this VolumeSnapshot: checked, its ref's uid filled in. */
async function reconcilePreProvisioned(ctx: DriverContext, vs: Obj, contentName: string): Promise<void> {
  const meta = record(vs.metadata);
  const found = await content(ctx, contentName);
  if (!found || text(record(found.spec).driver) !== ctx.driver) return;
  const ref = record(record(found.spec).volumeSnapshotRef);
  if (text(ref.name) !== text(meta.name) || text(ref.namespace) !== text(meta.namespace)) {
    const message = `VolumeSnapshotContent ${contentName} is bound to another VolumeSnapshot`;
    await ctx.custom.replaceNamespacedCustomObjectStatus({
      group: SNAPSHOT_GROUP,
      version,
      namespace: text(meta.namespace),
      plural: 'volumesnapshots',
      name: text(meta.name),
      body: { ...vs, status: { readyToUse: false, error: errorStatus(message) } },
    });
    return;
  }
  let bound = found;
  if (!ref.uid) {
    // The common controller completes the binding with the VolumeSnapshot's uid.
    const spec = { ...record(found.spec), volumeSnapshotRef: { ...ref, uid: text(meta.uid) } };
    bound = record(
      await ctx.custom.replaceClusterCustomObject({
        group: SNAPSHOT_GROUP,
        version,
        plural: 'volumesnapshotcontents',
        name: contentName,
        body: { ...found, spec },
      }),
    );
  }
  await settle(ctx, vs, bound);
}

/** The EBS snapshot a dynamic VolumeSnapshot asks for (found again by its tag on a later pass). */
async function snapshotOfClaim(
  ctx: DriverContext,
  vs: Obj,
  snapshotName: string,
): Promise<{ snapshotId: string; volumeHandle: string }> {
  const meta = record(vs.metadata);
  const tagged = await ctx.ec2.send(
    new DescribeSnapshotsCommand({
      OwnerIds: ['self'],
      Filters: [{ Name: 'tag:CSIVolumeSnapshotName', Values: [snapshotName] }],
    }),
  );
  const existing = tagged.Snapshots?.[0];
  if (existing?.SnapshotId) return { snapshotId: existing.SnapshotId, volumeHandle: existing.VolumeId ?? '' };
  const pvc = await ctx.core.readNamespacedPersistentVolumeClaim({
    namespace: text(meta.namespace),
    name: text(record(record(vs.spec).source).persistentVolumeClaimName),
  });
  const pv = await ctx.core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
  if (pv.spec?.csi?.driver !== ctx.driver)
    throw new Error(`PV ${pv.metadata?.name} is not a ${ctx.driver} volume`);
  const made = await ctx.ec2.send(
    new CreateSnapshotCommand({
      VolumeId: pv.spec.csi.volumeHandle,
      TagSpecifications: [
        {
          ResourceType: 'snapshot',
          Tags: [
            { Key: 'CSIVolumeSnapshotName', Value: snapshotName },
            { Key: 'kubernetes.io/cluster-snapshot', Value: 'owned' },
          ],
        },
      ],
    }),
  );
  return { snapshotId: made.SnapshotId ?? '', volumeHandle: pv.spec.csi.volumeHandle };
}

/** The content a dynamic VolumeSnapshot is bound to, with the class's deletion policy. */
async function createContent(
  ctx: DriverContext,
  options: { vs: Obj; className: string; volumeHandle: string },
): Promise<Obj> {
  const meta = record(options.vs.metadata);
  const cls = record(
    await ctx.custom.getClusterCustomObject({
      group: SNAPSHOT_GROUP,
      version,
      plural: 'volumesnapshotclasses',
      name: options.className,
    }),
  );
  return record(
    await ctx.custom.createClusterCustomObject({
      group: SNAPSHOT_GROUP,
      version,
      plural: 'volumesnapshotcontents',
      body: {
        apiVersion: `${SNAPSHOT_GROUP}/${version}`,
        kind: 'VolumeSnapshotContent',
        metadata: { name: `snapcontent-${text(meta.uid)}` },
        spec: {
          deletionPolicy: text(cls.deletionPolicy) || 'Delete',
          driver: ctx.driver,
          source: { volumeHandle: options.volumeHandle },
          volumeSnapshotClassName: options.className,
          volumeSnapshotRef: {
            apiVersion: `${SNAPSHOT_GROUP}/${version}`,
            kind: 'VolumeSnapshot',
            namespace: text(meta.namespace),
            name: text(meta.name),
            uid: text(meta.uid),
          },
        },
      },
    }),
  );
}

/** A VolumeSnapshot of a PVC: its EBS snapshot and the content `snapcontent-<uid>` bound to it. */
async function reconcileDynamic(ctx: DriverContext, vs: Obj): Promise<void> {
  const className = text(record(vs.spec).volumeSnapshotClassName);
  if (!className || (await classDriver(ctx, className)) !== ctx.driver) return;
  const uid = text(record(vs.metadata).uid);
  let bound = await content(ctx, `snapcontent-${uid}`);
  if (!bound || !text(record(bound.status).snapshotHandle)) {
    // Found again by its tag when an earlier pass took it but did not record it.
    const taken = await snapshotOfClaim(ctx, vs, `snapshot-${uid}`);
    bound ??= await createContent(ctx, { vs, className, volumeHandle: taken.volumeHandle });
    bound = { ...bound, status: { snapshotHandle: taken.snapshotId } };
  }
  await settle(ctx, vs, bound);
}

/** One VolumeSnapshot brought towards readyToUse (or an error), unless it is there already. */
export async function reconcileVolumeSnapshot(ctx: DriverContext, vs: Obj): Promise<void> {
  const status = record(vs.status);
  if (status.readyToUse === true || status.error !== undefined) return;
  if (!ctx.serves(text(record(vs.metadata).namespace))) return;
  const source = record(record(vs.spec).source);
  if (source.volumeSnapshotContentName)
    return reconcilePreProvisioned(ctx, vs, text(source.volumeSnapshotContentName));
  if (source.persistentVolumeClaimName) return reconcileDynamic(ctx, vs);
}

/** Every VolumeSnapshot of the cluster. */
export async function listVolumeSnapshots(ctx: DriverContext): Promise<Obj[]> {
  const list = record(
    await ctx.custom.listClusterCustomObject({ group: SNAPSHOT_GROUP, version, plural: 'volumesnapshots' }),
  );
  return Array.isArray(list.items) ? (list.items as Obj[]) : [];
}
