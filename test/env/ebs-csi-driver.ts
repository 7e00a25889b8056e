/**
 * A stand-in for the EBS CSI driver with its sidecars, for the test environment's clusters, which
 * run no CSI driver: in one account and region of the AWS emulator it plays the
 * external-provisioner (a PVC of a StorageClass whose provisioner is the driver gets an EBS volume,
 * empty or CreateVolume'd from its `dataSource` VolumeSnapshot, encrypted as the class or the
 * snapshot says, and a PV with `csi.volumeHandle` = the volume id and a claimRef to the PVC, which
 * kube-controller-manager's PV binder then binds; a released PV with reclaim policy Delete takes
 * its volume with it), and the snapshot-controller and external-snapshotter (ebs-csi-snapshots.ts).
 * In process, reconciling by polling the apiserver, as a controller would on each watch event.
 * Serves only the namespaces it is told (tests share a cluster) and only its driver's objects.
 */
import {
  CreateVolumeCommand,
  DeleteVolumeCommand,
  DescribeVolumesCommand,
  EC2Client,
  type Snapshot,
  type Volume,
  type VolumeType,
} from '@aws-sdk/client-ec2';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  StorageV1Api,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1StorageClass,
} from '@kubernetes/client-node';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { parseQuantity } from '../../shared/domain/kubernetes/quantity.js';
import {
  type DriverContext,
  findSnapshot,
  listVolumeSnapshots,
  reconcileVolumeSnapshot,
  record,
  SNAPSHOT_GROUP,
  text,
} from './ebs-csi-snapshots.js';

export const EBS_CSI_DRIVER = 'ebs.csi.aws.com';
const GiB = 2n ** 30n;

export interface EbsCsiDriverOptions {
  /** The cluster's kubeconfig file. */
  readonly kubeconfig: string;
  /** The account and region it serves: the emulator's endpoint, the region, that account's credentials. */
  readonly aws: {
    readonly endpoint: string;
    readonly region: string;
    readonly credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  };
  /** The zone its volumes are made in (default: the region's `a`). */
  readonly zone?: string;
  /** Default ebs.csi.aws.com; a test of the stand-in on a shared cluster names its own. */
  readonly driver?: string;
  /** The namespaces whose PVCs and VolumeSnapshots it serves (more with `serve`); default every one. */
  readonly namespaces?: readonly string[];
  readonly intervalMs?: number;
}

export interface ProvisionedVolume {
  readonly claim: string;
  readonly pvName: string;
  readonly volumeId: string;
  readonly snapshotId?: string;
}

export interface EbsCsiDriver {
  readonly driver: string;
  readonly region: string;
  /** Unexpected failures while reconciling (a test asserts there were none). */
  readonly errors: string[];
  /** Why a claim waits (its VolumeSnapshot not ready, or failed), by `namespace/name`, latest. */
  readonly waiting: Map<string, string>;
  /** Each volume it made for a claim. */
  readonly provisioned: ProvisionedVolume[];
  /** Serves one more namespace. */
  serve(namespace: string): void;
  /** Stops the loop and waits for its current pass. */
  stop(): Promise<void>;
}

interface ProvisionerContext extends DriverContext {
  readonly storage: StorageV1Api;
  readonly region: string;
  readonly zone: string;
  readonly state: Pick<EbsCsiDriver, 'waiting' | 'provisioned'>;
}

/** Starts the stand-in; stop it after the tests (it leaves what it made to their clean-up). */
export function startEbsCsiDriver(options: EbsCsiDriverOptions): EbsCsiDriver {
  const kc = new KubeConfig();
  kc.loadFromFile(options.kubeconfig);
  const served = options.namespaces ? new Set(options.namespaces) : undefined;
  const driver = options.driver ?? EBS_CSI_DRIVER;
  const state: Pick<EbsCsiDriver, 'errors' | 'waiting' | 'provisioned'> = {
    errors: [],
    waiting: new Map(),
    provisioned: [],
  };
  const ctx: ProvisionerContext = {
    driver,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    storage: kc.makeApiClient(StorageV1Api),
    ec2: new EC2Client({ ...options.aws, maxAttempts: 5 }),
    serves: (namespace) => served === undefined || served.has(namespace),
    region: options.aws.region,
    zone: options.zone ?? `${options.aws.region}a`,
    state,
  };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await reconcileAll(ctx, state.errors);
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
    }
  })();
  return {
    driver,
    region: options.aws.region,
    ...state,
    serve: (namespace) => served?.add(namespace),
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

// A conflict, throttling or a server error is retried on the next pass, as a controller requeues;
// an object deleted meanwhile, or a snapshot API not installed yet, is no error either.
function recordError(errors: string[], error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && (code === 404 || code === 409 || code === 429 || code >= 500)) return;
  const message = error instanceof Error ? error.message : String(error);
  if (!errors.includes(message)) errors.push(message);
}

async function reconcileAll(ctx: ProvisionerContext, errors: string[]): Promise<void> {
  const each = async <T>(items: readonly T[], step: (item: T) => Promise<void>): Promise<void> => {
    for (const item of items) await step(item).catch((e: unknown) => recordError(errors, e));
  };
  await listVolumeSnapshots(ctx)
    .then((snapshots) => each(snapshots, (vs) => reconcileVolumeSnapshot(ctx, vs)))
    .catch((e: unknown) => recordError(errors, e));
  await ctx.core
    .listPersistentVolumeClaimForAllNamespaces()
    .then((claims) => each(claims.items, (pvc) => reconcileClaim(ctx, pvc)))
    .catch((e: unknown) => recordError(errors, e));
  await ctx.core
    .listPersistentVolume()
    .then((pvs) => each(pvs.items, (pv) => reclaimVolume(ctx, pv)))
    .catch((e: unknown) => recordError(errors, e));
}

async function storageClassOf(ctx: ProvisionerContext, name: string): Promise<V1StorageClass | undefined> {
  try {
    return await ctx.storage.readStorageClass({ name });
  } catch (error) {
    if ((error as { code?: unknown }).code === 404) return undefined;
    throw error;
  }
}

/** external-provisioner: a pending claim of the driver's class gets a volume and a PV for it. */
async function reconcileClaim(ctx: ProvisionerContext, pvc: V1PersistentVolumeClaim): Promise<void> {
  const namespace = pvc.metadata?.namespace ?? '';
  const key = `${namespace}/${pvc.metadata?.name ?? ''}`;
  if (pvc.status?.phase !== 'Pending' || pvc.spec?.volumeName || !ctx.serves(namespace)) return;
  const sc = pvc.spec?.storageClassName ? await storageClassOf(ctx, pvc.spec.storageClassName) : undefined;
  if (sc?.provisioner !== ctx.driver) return;
  // WaitForFirstConsumer: the scheduler names the node first.
  if (
    sc.volumeBindingMode === 'WaitForFirstConsumer' &&
    !pvc.metadata?.annotations?.['volume.kubernetes.io/selected-node']
  )
    return;
  const pvName = `pvc-${pvc.metadata?.uid ?? ''}`;
  const existing = await ctx.core.readPersistentVolume({ name: pvName }).catch(() => undefined);
  if (existing) return;
  const source = await snapshotSource(ctx, pvc);
  if (source && 'waiting' in source) {
    ctx.state.waiting.set(key, source.waiting);
    return;
  }
  ctx.state.waiting.delete(key);
  const volume = await volumeFor(ctx, { pvc, sc, pvName, ...(source ? { snapshot: source.snapshot } : {}) });
  if (volume.State !== 'available') return;
  await ctx.core.createPersistentVolume({ body: persistentVolumeOf({ ctx, pvc, sc, pvName, volume }) });
  ctx.state.provisioned.push({
    claim: key,
    pvName,
    volumeId: volume.VolumeId ?? '',
    ...(source ? { snapshotId: source.snapshot.SnapshotId ?? '' } : {}),
  });
}

/** The EBS snapshot a claim's VolumeSnapshot dataSource stands for, or why the claim waits. */
async function snapshotSource(
  ctx: ProvisionerContext,
  pvc: V1PersistentVolumeClaim,
): Promise<{ snapshot: Snapshot } | { waiting: string } | undefined> {
  const source = pvc.spec?.dataSource;
  if (source?.kind !== 'VolumeSnapshot' || source.apiGroup !== SNAPSHOT_GROUP) return undefined;
  const namespace = pvc.metadata?.namespace ?? '';
  const vs = record(
    await ctx.custom
      .getNamespacedCustomObject({
        group: SNAPSHOT_GROUP,
        version: 'v1',
        namespace,
        plural: 'volumesnapshots',
        name: source.name,
      })
      .catch(() => undefined),
  );
  const status = record(vs.status);
  if (status.readyToUse !== true) {
    const error = text(record(status.error).message);
    return { waiting: `VolumeSnapshot ${namespace}/${source.name} is not ready${error ? `: ${error}` : ''}` };
  }
  const content = record(
    await ctx.custom.getClusterCustomObject({
      group: SNAPSHOT_GROUP,
      version: 'v1',
      plural: 'volumesnapshotcontents',
      name: text(status.boundVolumeSnapshotContentName),
    }),
  );
  const handle =
    text(record(content.status).snapshotHandle) || text(record(record(content.spec).source).snapshotHandle);
  const snapshot = await findSnapshot(ctx, handle);
  return snapshot ? { snapshot } : { waiting: `snapshot ${handle} is not in ${ctx.region}` };
}

/** Whole GiB, rounded up, of a claim's storage request (1 when it names none). */
function requestedGiB(pvc: V1PersistentVolumeClaim): number {
  const q = parseQuantity(String(pvc.spec?.resources?.requests?.storage ?? '1Gi'));
  if (!q || q.numerator <= 0n) return 1;
  const bytes = q.numerator / q.denominator + (q.numerator % q.denominator > 0n ? 1n : 0n);
  return Number((bytes + GiB - 1n) / GiB);
}

/**
 * The claim's volume: found again by its `CSIVolumeName` tag, or created (as the driver does:
 * the class's type and encryption; from a snapshot, at least the snapshot's size and, unless the
 * class names a key, encrypted with the snapshot's).
 */
async function volumeFor(
  ctx: ProvisionerContext,
  options: { pvc: V1PersistentVolumeClaim; sc: V1StorageClass; pvName: string; snapshot?: Snapshot },
): Promise<Volume> {
  const { sc, snapshot } = options;
  const found = await ctx.ec2.send(
    new DescribeVolumesCommand({ Filters: [{ Name: 'tag:CSIVolumeName', Values: [options.pvName] }] }),
  );
  const existing = found.Volumes?.find((v) => v.State !== 'deleting' && v.State !== 'deleted');
  if (existing) return existing;
  const params = sc.parameters ?? {};
  const encrypted = params.encrypted === 'true' || snapshot?.Encrypted === true;
  const kmsKeyId = params.kmsKeyId || (snapshot?.Encrypted ? snapshot.KmsKeyId : undefined);
  const created = await ctx.ec2.send(
    new CreateVolumeCommand({
      AvailabilityZone: ctx.zone,
      Size: Math.max(requestedGiB(options.pvc), snapshot?.VolumeSize ?? 0),
      VolumeType: (params.type ?? 'gp3') as VolumeType,
      ...(snapshot ? { SnapshotId: snapshot.SnapshotId } : {}),
      ...(encrypted ? { Encrypted: true } : {}),
      ...(encrypted && kmsKeyId ? { KmsKeyId: kmsKeyId } : {}),
      TagSpecifications: [
        {
          ResourceType: 'volume',
          Tags: [
            { Key: 'CSIVolumeName', Value: options.pvName },
            { Key: 'kubernetes.io/created-for/pvc/namespace', Value: options.pvc.metadata?.namespace ?? '' },
            { Key: 'kubernetes.io/created-for/pvc/name', Value: options.pvc.metadata?.name ?? '' },
            { Key: 'kubernetes.io/created-for/pv/name', Value: options.pvName },
          ],
        },
      ],
    }),
  );
  return created;
}

function persistentVolumeOf(options: {
  ctx: ProvisionerContext;
  pvc: V1PersistentVolumeClaim;
  sc: V1StorageClass;
  pvName: string;
  volume: Volume;
}): V1PersistentVolume {
  const { pvc, sc, volume } = options;
  return {
    metadata: {
      name: options.pvName,
      annotations: { 'pv.kubernetes.io/provisioned-by': options.ctx.driver },
    },
    spec: {
      capacity: { storage: `${volume.Size ?? 1}Gi` },
      accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: sc.reclaimPolicy ?? 'Delete',
      storageClassName: sc.metadata?.name ?? '',
      volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: pvc.metadata?.namespace ?? '',
        name: pvc.metadata?.name ?? '',
        uid: pvc.metadata?.uid ?? '',
      },
      csi: {
        driver: options.ctx.driver,
        volumeHandle: volume.VolumeId ?? '',
        fsType: sc.parameters?.['csi.storage.k8s.io/fstype'] ?? 'ext4',
      },
    },
  };
}

/** external-provisioner: a released PV it made, reclaim policy Delete, goes with its volume. */
async function reclaimVolume(ctx: ProvisionerContext, pv: V1PersistentVolume): Promise<void> {
  if (
    pv.status?.phase !== 'Released' ||
    pv.spec?.persistentVolumeReclaimPolicy !== 'Delete' ||
    pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'] !== ctx.driver ||
    !ctx.serves(pv.spec?.claimRef?.namespace ?? '')
  )
    return;
  const volumeId = pv.spec?.csi?.volumeHandle ?? '';
  await ctx.ec2.send(new DeleteVolumeCommand({ VolumeId: volumeId })).catch((error: unknown) => {
    if ((error as { name?: unknown }).name !== 'InvalidVolume.NotFound') throw error;
  });
  await ctx.core.deletePersistentVolume({ name: pv.metadata?.name ?? '' });
}
