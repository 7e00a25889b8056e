/**
 * A small stand-in for a CSI driver and the snapshot controller, for clusters without either:
 * for every VolumeSnapshot whose class names `driver`, it snapshots the PV's volume in the AWS
 * emulator's EC2 (the volume handle is an EBS volume id), creates the bound
 * VolumeSnapshotContent (`snapcontent-<VolumeSnapshot uid>`, the class's deletionPolicy), sets
 * both statuses through the status subresource, and marks them readyToUse once EC2 says
 * `completed`, as external-snapshotter would. Like external-snapshotter, its contents carry a
 * finalizer: a content being deleted with `deletionPolicy: Delete` takes its EC2 snapshot with
 * it, one with `Retain` leaves the snapshot. Touches no VolumeSnapshot of another driver.
 */
import {
  CreateSnapshotCommand,
  DeleteSnapshotCommand,
  DescribeSnapshotsCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';

type Obj = Record<string, unknown>;
const record = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

const group = 'snapshot.storage.k8s.io';
const version = 'v1';

/** external-snapshotter's finalizer on a content bound to its VolumeSnapshot. */
export const CONTENT_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection';

export interface CsiSnapshotController {
  /** Stops the loop and waits for its current pass. */
  stop(): Promise<void>;
  /** Errors met while reconciling (a test may assert there were none). */
  readonly errors: string[];
  /** Each VolumeSnapshot it bound, as the apiserver served it then. */
  readonly bound: Obj[];
  /** Each content of its driver deleted, with its deletionPolicy then and whether EC2 lost the snapshot. */
  readonly deleted: {
    name: string;
    deletionPolicy: string;
    snapshotHandle: string;
    snapshotDeleted: boolean;
  }[];
}

export function startCsiSnapshotController(options: {
  kc: KubeConfig;
  ec2: EC2Client;
  driver: string;
  /** What the content reports as restoreSize, in bytes. */
  restoreSizeBytes?: number;
  intervalMs?: number;
}): CsiSnapshotController {
  const custom = options.kc.makeApiClient(CustomObjectsApi);
  const core = options.kc.makeApiClient(CoreV1Api);
  const errors: string[] = [];
  const bound: Obj[] = [];
  const deleted: CsiSnapshotController['deleted'] = [];
  const size = options.restoreSizeBytes ?? 8 * 2 ** 30;
  let stopped = false;

  const reconcile = async (vs: Obj): Promise<void> => {
    const meta = record(vs.metadata);
    const namespace = text(meta.namespace);
    const name = text(meta.name);
    const spec = record(vs.spec);
    const status = record(vs.status);
    const className = text(spec.volumeSnapshotClassName);
    if (!className || status.readyToUse === true) return;
    const cls = record(
      await custom.getClusterCustomObject({
        group,
        version,
        plural: 'volumesnapshotclasses',
        name: className,
      }),
    );
    if (cls.driver !== options.driver) return;
    const contentName = `snapcontent-${text(meta.uid)}`;
    if (!status.boundVolumeSnapshotContentName) {
      const pvc = await core.readNamespacedPersistentVolumeClaim({
        namespace,
        name: text(record(spec.source).persistentVolumeClaimName),
      });
      const pv = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
      const volumeHandle = pv.spec?.csi?.volumeHandle ?? '';
      const snapshot = await options.ec2.send(
        new CreateSnapshotCommand({
          VolumeId: volumeHandle,
          TagSpecifications: [
            { ResourceType: 'snapshot', Tags: [{ Key: 'CSIVolumeSnapshotName', Value: name }] },
          ],
        }),
      );
      const content = record(
        await custom.createClusterCustomObject({
          group,
          version,
          plural: 'volumesnapshotcontents',
          body: {
            apiVersion: `${group}/${version}`,
            kind: 'VolumeSnapshotContent',
            metadata: { name: contentName, finalizers: [CONTENT_FINALIZER] },
            spec: {
              deletionPolicy: text(cls.deletionPolicy) || 'Delete',
              driver: options.driver,
              source: { volumeHandle },
              volumeSnapshotClassName: className,
              volumeSnapshotRef: {
                apiVersion: `${group}/${version}`,
                kind: 'VolumeSnapshot',
                namespace,
                name,
                uid: text(meta.uid),
              },
            },
          },
        }),
      );
      await custom.replaceClusterCustomObjectStatus({
        group,
        version,
        plural: 'volumesnapshotcontents',
        name: contentName,
        body: {
          ...content,
          status: {
            snapshotHandle: snapshot.SnapshotId,
            restoreSize: size,
            readyToUse: false,
            creationTime: Date.now() * 1e6,
          },
        },
      });
      await custom.replaceNamespacedCustomObjectStatus({
        group,
        version,
        namespace,
        plural: 'volumesnapshots',
        name,
        body: {
          ...vs,
          status: {
            boundVolumeSnapshotContentName: contentName,
            readyToUse: false,
            creationTime: new Date().toISOString(),
            restoreSize: `${size / 2 ** 30}Gi`,
          },
        },
      });
      bound.push(vs);
      return;
    }
    // Bound: ready once EC2 has completed the snapshot.
    const content = record(
      await custom.getClusterCustomObject({
        group,
        version,
        plural: 'volumesnapshotcontents',
        name: contentName,
      }),
    );
    const handle = text(record(content.status).snapshotHandle);
    const found = await options.ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [handle] }));
    if (found.Snapshots?.[0]?.State !== 'completed') return;
    await custom.replaceClusterCustomObjectStatus({
      group,
      version,
      plural: 'volumesnapshotcontents',
      name: contentName,
      body: { ...content, status: { ...record(content.status), readyToUse: true } },
    });
    await custom.replaceNamespacedCustomObjectStatus({
      group,
      version,
      namespace,
      plural: 'volumesnapshots',
      name,
      body: { ...vs, status: { ...status, readyToUse: true } },
    });
  };

  // A content of this driver being deleted: its snapshot goes too unless it is retained.
  const finalize = async (content: Obj): Promise<void> => {
    const meta = record(content.metadata);
    const spec = record(content.spec);
    const finalizers = Array.isArray(meta.finalizers) ? (meta.finalizers as string[]) : [];
    if (!meta.deletionTimestamp || spec.driver !== options.driver || !finalizers.includes(CONTENT_FINALIZER))
      return;
    const deletionPolicy = text(spec.deletionPolicy);
    const snapshotHandle = text(record(content.status).snapshotHandle);
    if (deletionPolicy === 'Delete' && snapshotHandle)
      await options.ec2.send(new DeleteSnapshotCommand({ SnapshotId: snapshotHandle }));
    await custom.replaceClusterCustomObject({
      group,
      version,
      plural: 'volumesnapshotcontents',
      name: text(meta.name),
      body: {
        ...content,
        metadata: { ...meta, finalizers: finalizers.filter((f) => f !== CONTENT_FINALIZER) },
      },
    });
    deleted.push({
      name: text(meta.name),
      deletionPolicy,
      snapshotHandle,
      snapshotDeleted: deletionPolicy === 'Delete' && snapshotHandle !== '',
    });
  };

  // A conflict, throttling (an apiserver re-initializing a new CRD's storage answers 429) or a
  // server error is retried on the next pass, as a controller requeues; anything else is an error.
  const transient = (error: unknown): boolean => {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'number' && (code === 409 || code === 429 || code >= 500);
  };
  const recordError = (error: unknown): void => {
    if (!transient(error)) errors.push(error instanceof Error ? error.message : String(error));
  };
  const pass = async (): Promise<void> => {
    const list = record(await custom.listClusterCustomObject({ group, version, plural: 'volumesnapshots' }));
    for (const vs of Array.isArray(list.items) ? (list.items as Obj[]) : []) {
      try {
        await reconcile(vs);
      } catch (error) {
        recordError(error);
      }
    }
    const contents = record(
      await custom.listClusterCustomObject({ group, version, plural: 'volumesnapshotcontents' }),
    );
    for (const content of Array.isArray(contents.items) ? (contents.items as Obj[]) : []) {
      try {
        await finalize(content);
      } catch (error) {
        recordError(error);
      }
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await pass().catch(recordError);
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
    }
  })();
  return {
    errors,
    bound,
    deleted,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/**
 * A VolumeSnapshotClass of `driver` labelled as the one Velero chooses for the driver
 * (`velero.io/csi-volumesnapshot-class`), with deletionPolicy Delete: a backup must keep the
 * storage snapshot anyway (it sets the content to Retain before deleting the VolumeSnapshot).
 */
export async function createVeleroSnapshotClass(
  kc: KubeConfig,
  options: { name: string; driver: string },
): Promise<void> {
  await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    group,
    version,
    plural: 'volumesnapshotclasses',
    body: {
      apiVersion: `${group}/${version}`,
      kind: 'VolumeSnapshotClass',
      metadata: { name: options.name, labels: { 'velero.io/csi-volumesnapshot-class': 'true' } },
      driver: options.driver,
      deletionPolicy: 'Delete',
    },
  });
}
