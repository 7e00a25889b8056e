/**
 * The objects a volume restore writes, built from backed-up ones: a PV pointed at a volume
 * re-created from a native snapshot (velero-plugin-for-aws SetVolumeID, plus Lifeboat's zone
 * rewrite when the volume lands in another availability zone), a PV renamed as Velero renames
 * it, a PVC made to re-provision or to fill from a CSI snapshot (Velero's CSI PVC restore item
 * action), the pre-provisioned VolumeSnapshotContent and VolumeSnapshot it needs, and the patch
 * that gives a re-provisioned PV its backed-up reclaim policy and labels (Velero's restore
 * finalizer). Pure: returns new objects, never throws on odd input.
 */

import { compareQuantities, parseQuantity, quantityOf } from '../kubernetes/quantity.js';
import { EBS_CSI_DRIVER, EBS_CSI_ZONE_KEY, ZONE_LABEL, ZONE_LABEL_DEPRECATED } from './ebs-volume.js';
import type { PVInfo } from './info-shapes.js';

type Json = Record<string, unknown>;

const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Velero's annotation naming the PV a renamed one was restored from. */
export const ORIGINAL_PV_NAME_ANNOTATION = 'velero.io/original-pv-name';
/** The PVC annotations Velero's CSI PVC action removes (VolumeSnapshotLabel, DataUploadNameAnnotation). */
export const VOLUME_SNAPSHOT_NAME_ANNOTATION = 'velero.io/volume-snapshot-name';
export const DATA_UPLOAD_NAME_ANNOTATION = 'velero.io/data-upload-name';
/** Velero's annotation on a restored VolumeSnapshot (VSCDeletionPolicyAnnotation). */
export const VSC_DELETION_POLICY_ANNOTATION = 'velero.io/csi-vsc-deletion-policy';
export const SNAPSHOT_API_GROUP = 'snapshot.storage.k8s.io';
const SNAPSHOT_API_VERSION = `${SNAPSHOT_API_GROUP}/v1`;

/** The PV controllers' binding annotations Velero's resetVolumeBindingInfo removes. */
export const PV_BINDING_ANNOTATIONS = [
  'pv.kubernetes.io/bind-completed',
  'pv.kubernetes.io/bound-by-controller',
];

const ZONE_KEYS = new Set([ZONE_LABEL, ZONE_LABEL_DEPRECATED, EBS_CSI_ZONE_KEY]);

/** A PV under a new name, with Velero's annotation naming the one it was restored from. */
export function renamedPersistentVolume(pv: Json, name: string): Json {
  const out = structuredClone(pv);
  const metadata = record(out.metadata);
  const original = typeof metadata.name === 'string' ? metadata.name : '';
  metadata.annotations = { ...record(metadata.annotations), [ORIGINAL_PV_NAME_ANNOTATION]: original };
  metadata.name = name;
  out.metadata = metadata;
  return out;
}

/**
 * A PV waiting for its new volume: the EBS volume id blanked, so that a PV created before its
 * volume exists is refused by the apiserver instead of pointing at the backed-up volume; and,
 * when the volume is re-created in another zone, every zone label and node-affinity zone value
 * moved to that zone (Lifeboat: Velero re-creates only in the recorded zone).
 */
export function awaitingVolume(pv: Json, options: { availabilityZone: string; recordedZone: string }): Json {
  const out = withVolumeId(pv, { volumeId: '' });
  if (!options.availabilityZone || options.availabilityZone === options.recordedZone) return out;
  const metadata = record(out.metadata);
  const labels = record(metadata.labels);
  for (const key of [ZONE_LABEL, ZONE_LABEL_DEPRECATED])
    if (typeof labels[key] === 'string') labels[key] = options.availabilityZone;
  if (metadata.labels !== undefined) metadata.labels = labels;
  const spec = record(out.spec);
  const required = record(record(spec.nodeAffinity).required);
  for (const term of list(required.nodeSelectorTerms)) {
    for (const expression of list(record(term).matchExpressions)) {
      const e = record(expression);
      if (typeof e.key === 'string' && ZONE_KEYS.has(e.key) && e.operator === 'In')
        e.values = [options.availabilityZone];
    }
  }
  return out;
}

/**
 * The PV pointed at an EBS volume (velero-plugin-for-aws SetVolumeID): the CSI volume handle for
 * ebs.csi.aws.com, else the in-tree volume id, `aws://<zone>/<id>` when the PV carries the
 * `failure-domain.beta.kubernetes.io/zone` label.
 */
export function withVolumeId(pv: Json, options: { volumeId: string }): Json {
  const out = structuredClone(pv);
  const spec = record(out.spec);
  const csi = record(spec.csi);
  if (csi.driver === EBS_CSI_DRIVER) {
    csi.volumeHandle = options.volumeId;
    spec.csi = csi;
  } else if (spec.awsElasticBlockStore !== undefined) {
    const zone = record(record(out.metadata).labels)[ZONE_LABEL_DEPRECATED];
    const ebs = record(spec.awsElasticBlockStore);
    ebs.volumeID =
      typeof zone === 'string' && zone && options.volumeId
        ? `aws://${zone}/${options.volumeId}`
        : options.volumeId;
    spec.awsElasticBlockStore = ebs;
  }
  out.spec = spec;
  return out;
}

/** The EBS volume id a PV points at now (after withVolumeId), or undefined. */
export function volumeIdIn(pv: Json): string | undefined {
  const spec = record(pv.spec);
  const csi = record(spec.csi);
  const id = csi.driver === EBS_CSI_DRIVER ? csi.volumeHandle : record(spec.awsElasticBlockStore).volumeID;
  return typeof id === 'string' ? (/vol-.*/.exec(id)?.[0] ?? undefined) : undefined;
}

/** A PVC left to its storage class: no bound volume (Velero: reset for dynamic provisioning). */
export function reprovisionedClaim(pvc: Json): Json {
  const out = structuredClone(pvc);
  const spec = record(out.spec);
  delete spec.volumeName;
  out.spec = spec;
  return out;
}

/** A PVC whose bound PV was renamed (Velero: renamedPVs). */
export function claimOfRenamedVolume(pvc: Json, name: string): Json {
  const out = structuredClone(pvc);
  out.spec = { ...record(out.spec), volumeName: name };
  return out;
}

function withoutSnapshotAnnotations(pvc: Json): Json {
  const metadata = record(pvc.metadata);
  const annotations = { ...record(metadata.annotations) };
  delete annotations[VOLUME_SNAPSHOT_NAME_ANNOTATION];
  delete annotations[DATA_UPLOAD_NAME_ANNOTATION];
  return { ...pvc, metadata: { ...metadata, annotations } };
}

/**
 * Velero's CSI PVC action with `restorePVs: false`: no volume name, no data source, so the
 * storage class provisions an empty volume.
 */
export function emptyClaim(pvc: Json): Json {
  const out = withoutSnapshotAnnotations(reprovisionedClaim(pvc));
  const spec = record(out.spec);
  delete spec.dataSource;
  delete spec.dataSourceRef;
  return { ...out, spec };
}

/**
 * Velero resetPVCSpec and setPVCStorageResourceRequest: the PVC filled from a VolumeSnapshot
 * (`spec.dataSource`), no volume name, no dataSourceRef, and a storage request raised to the
 * snapshot's size when it asks for less.
 */
export function claimFromSnapshot(
  pvc: Json,
  options: { volumeSnapshotName: string; sizeBytes?: number },
): Json {
  const out = emptyClaim(pvc);
  const spec = record(out.spec);
  spec.dataSource = {
    apiGroup: SNAPSHOT_API_GROUP,
    kind: 'VolumeSnapshot',
    name: options.volumeSnapshotName,
  };
  if (options.sizeBytes && options.sizeBytes > 0) {
    const resources = record(spec.resources);
    const requests = record(resources.requests);
    const asked = typeof requests.storage === 'string' ? parseQuantity(requests.storage) : undefined;
    const size = quantityOf(BigInt(options.sizeBytes));
    if (!asked || compareQuantities(asked, size) < 0) requests.storage = String(options.sizeBytes);
    resources.requests = requests;
    spec.resources = resources;
  }
  return { ...out, spec };
}

/**
 * The pre-provisioned VolumeSnapshotContent of a restored CSI snapshot (Velero's
 * VolumeSnapshot restore action): the backed-up snapshot handle and driver, deletion policy
 * Retain (deleting the restored snapshot never deletes the backup's), bound to the
 * VolumeSnapshot of the same name in the target namespace.
 */
export function volumeSnapshotContentOf(options: {
  name: string;
  snapshotHandle: string;
  driver: string;
  /** Where the VolumeSnapshot is restored (the mapped namespace). */
  namespace: string;
}): Json {
  return {
    apiVersion: SNAPSHOT_API_VERSION,
    kind: 'VolumeSnapshotContent',
    metadata: { name: options.name },
    spec: {
      deletionPolicy: 'Retain',
      driver: options.driver,
      source: { snapshotHandle: options.snapshotHandle },
      volumeSnapshotRef: {
        apiVersion: SNAPSHOT_API_VERSION,
        kind: 'VolumeSnapshot',
        namespace: options.namespace,
        name: options.name,
      },
    },
  };
}

/** The VolumeSnapshot a restored PVC fills from, statically bound to its content. */
export function volumeSnapshotOf(options: { name: string; namespace: string }): Json {
  return {
    apiVersion: SNAPSHOT_API_VERSION,
    kind: 'VolumeSnapshot',
    metadata: {
      name: options.name,
      namespace: options.namespace,
      annotations: { [VSC_DELETION_POLICY_ANNOTATION]: 'Retain' },
    },
    spec: { source: { volumeSnapshotContentName: options.name } },
  };
}

/**
 * The JSON merge patch that gives a re-provisioned PV its backed-up reclaim policy and labels,
 * or undefined when it has them (Velero needPatch). As Velero, the labels become exactly the
 * backed-up ones: labels the provisioner set and the backup lacks are removed.
 */
export function provisionedVolumePatch(pv: Json, pvInfo: PVInfo): Json | undefined {
  const current = Object.fromEntries(
    Object.entries(record(record(pv.metadata).labels)).filter(
      (e): e is [string, string] => typeof e[1] === 'string',
    ),
  );
  const wanted = pvInfo.labels ?? {};
  // An unknown policy (older records) is left as the provisioner set it.
  const policy = pvInfo.reclaimPolicy
    ? record(pv.spec).persistentVolumeReclaimPolicy !== pvInfo.reclaimPolicy
    : false;
  const labelsDiffer = Object.entries(wanted).some(([k, v]) => current[k] !== v);
  if (!policy && !labelsDiffer) return undefined;
  const labels: Record<string, string | null> = { ...wanted };
  for (const key of Object.keys(current)) if (!(key in wanted)) labels[key] = null;
  return {
    metadata: { labels },
    ...(pvInfo.reclaimPolicy ? { spec: { persistentVolumeReclaimPolicy: pvInfo.reclaimPolicy } } : {}),
  };
}
