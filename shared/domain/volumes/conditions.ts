/**
 * The resource policy document (Velero `internal/resourcepolicies`, `version: v1`) as domain
 * types, and the matching of one volume against its `volumePolicies`: every condition of a
 * policy must match, the first matching policy wins. Matching reads only the facts Velero's
 * `structuredVolume` reads (capacity, storage class, NFS, CSI, volume type, PVC labels and phase).
 * Pure: no I/O; never throws on odd objects (a missing field is an absent fact).
 */
import {
  compareQuantities,
  isZeroQuantity,
  parseQuantity,
  type Quantity,
  ZERO_QUANTITY,
} from '../kubernetes/quantity.js';

export type VolumeActionType = 'skip' | 'snapshot' | 'fs-backup';

/** Velero's SupportedVolume values (`volume_types_conditions.go`), spelled as Velero spells them. */
export const SUPPORTED_VOLUME_TYPES = [
  'awsAzureDisk',
  'awsElasticBlockStore',
  'azureDisk',
  'azureFile',
  'cinder',
  'cephfs',
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'fc',
  'flocker',
  'flexVolume',
  'gitRepo',
  'glusterfs',
  'gcePersistentDisk',
  'hostPath',
  'iscsi',
  'local',
  'nfs',
  'photonPersistentDisk',
  'portworxVolume',
  'projected',
  'quobyte',
  'rbd',
  'scaleIO',
  'secret',
  'storageOS',
  'vsphereVolume',
] as const;
export type SupportedVolumeType = (typeof SUPPORTED_VOLUME_TYPES)[number];

export const PVC_PHASES = ['Pending', 'Bound', 'Lost'] as const;

export interface VolumeConditions {
  /** "lower,upper": either side may be empty or 0 (open). */
  readonly capacity?: string | null;
  readonly storageClass?: readonly string[] | null;
  /** `{}` matches any NFS volume. */
  readonly nfs?: { readonly server?: string | null; readonly path?: string | null } | null;
  /** `{}` matches any CSI volume; volumeAttributes must all be present on the volume. */
  readonly csi?: {
    readonly driver?: string | null;
    readonly volumeAttributes?: Readonly<Record<string, string>> | null;
  } | null;
  readonly volumeTypes?: readonly SupportedVolumeType[] | null;
  readonly pvcLabels?: Readonly<Record<string, string>> | null;
  readonly pvcPhase?: readonly string[] | null;
}

export interface VolumePolicyRule {
  /** Absent or empty conditions match every volume (Velero: "nil condition always match"). */
  readonly conditions?: VolumeConditions | null;
  readonly action: {
    readonly type: VolumeActionType;
    readonly parameters?: Readonly<Record<string, unknown>> | null;
  };
}

export interface IncludeExcludePolicy {
  readonly includedClusterScopedResources?: readonly string[] | null;
  readonly excludedClusterScopedResources?: readonly string[] | null;
  readonly includedNamespaceScopedResources?: readonly string[] | null;
  readonly excludedNamespaceScopedResources?: readonly string[] | null;
}

export interface ResourcePolicy {
  readonly version: 'v1';
  readonly volumePolicies?: readonly VolumePolicyRule[] | null;
  readonly includeExcludePolicy?: IncludeExcludePolicy | null;
}

/** A capacity range; a zero bound is open (Velero `capacity.isInRange`). */
export interface CapacityRange {
  readonly lower: Quantity;
  readonly upper: Quantity;
}

/** Parses `capacity` as Velero's parseCapacity and validates it as capacityCondition.validate. */
export function parseCapacityRange(
  text: string,
): { ok: true; range: CapacityRange } | { ok: false; message: string } {
  const parts = (text === '' ? ',' : text).split(',');
  if (parts.length !== 2) return { ok: false, message: `must be "lower,upper" (got "${text}")` };
  const bounds: Quantity[] = [];
  for (const part of parts) {
    const trimmed = part.trim();
    const q = trimmed === '' ? ZERO_QUANTITY : parseQuantity(trimmed);
    if (!q) return { ok: false, message: `"${trimmed}" is not a Kubernetes quantity such as 10Gi or 500M` };
    bounds.push(q);
  }
  const [lower = ZERO_QUANTITY, upper = ZERO_QUANTITY] = bounds;
  // Velero accepts [0,a], [a,b] with a <= b, and [b,0] (upper open).
  if (compareQuantities(upper, lower) >= 0 || (!isZeroQuantity(lower) && isZeroQuantity(upper))) {
    return { ok: true, range: { lower, upper } };
  }
  return { ok: false, message: `the lower bound is above the upper bound in "${text}"` };
}

export function capacityInRange(range: CapacityRange, capacity: Quantity): boolean {
  const { lower, upper } = range;
  if (isZeroQuantity(lower) && compareQuantities(upper, capacity) >= 0) return true;
  if (isZeroQuantity(upper) && compareQuantities(lower, capacity) <= 0) return true;
  if (!isZeroQuantity(lower) && !isZeroQuantity(upper)) {
    return compareQuantities(lower, capacity) <= 0 && compareQuantities(upper, capacity) >= 0;
  }
  return false;
}

/** What matching knows of a volume (Velero's structuredVolume). */
export interface VolumeFacts {
  /** Zero when unknown (a pod volume, an unbound PVC), as in Velero. */
  readonly capacity: Quantity;
  readonly storageClass: string;
  readonly nfs?: { readonly server: string; readonly path: string };
  readonly csi?: { readonly driver: string; readonly volumeAttributes: Readonly<Record<string, string>> };
  /** Empty when the source type is unknown. */
  readonly volumeType: SupportedVolumeType | '';
  readonly pvcLabels?: Readonly<Record<string, string>>;
  readonly pvcPhase: string;
}

type KubeObject = Readonly<Record<string, unknown>>;

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const stringMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(record(v) ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );

// JSON field of the volume source → Velero's type name, in Velero's lookup order.
const PV_SOURCES: readonly (readonly [string, SupportedVolumeType])[] = [
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['azureDisk', 'azureDisk'],
  ['azureFile', 'azureFile'],
  ['cephfs', 'cephfs'],
  ['cinder', 'cinder'],
  ['csi', 'csi'],
  ['fc', 'fc'],
  ['flocker', 'flocker'],
  ['flexVolume', 'flexVolume'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['glusterfs', 'glusterfs'],
  ['hostPath', 'hostPath'],
  ['iscsi', 'iscsi'],
  ['local', 'local'],
  ['nfs', 'nfs'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['quobyte', 'quobyte'],
  ['rbd', 'rbd'],
  ['scaleIO', 'scaleIO'],
  ['storageos', 'storageOS'],
  ['vsphereVolume', 'vsphereVolume'],
];
const POD_VOLUME_SOURCES: readonly (readonly [string, SupportedVolumeType])[] = [
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['azureDisk', 'azureDisk'],
  ['azureFile', 'azureFile'],
  ['cephfs', 'cephfs'],
  ['cinder', 'cinder'],
  ['csi', 'csi'],
  ['fc', 'fc'],
  ['flocker', 'flocker'],
  ['flexVolume', 'flexVolume'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['gitRepo', 'gitRepo'],
  ['glusterfs', 'glusterfs'],
  ['iscsi', 'iscsi'],
  ['nfs', 'nfs'],
  ['secret', 'secret'],
  ['rbd', 'rbd'],
  ['downwardAPI', 'downwardAPI'],
  ['configMap', 'configMap'],
  ['projected', 'projected'],
  ['ephemeral', 'ephemeral'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['quobyte', 'quobyte'],
  ['scaleIO', 'scaleIO'],
  ['storageos', 'storageOS'],
  ['vsphereVolume', 'vsphereVolume'],
  ['hostPath', 'hostPath'],
  ['emptyDir', 'emptyDir'],
];

function sourceType(
  source: Record<string, unknown>,
  table: readonly (readonly [string, SupportedVolumeType])[],
): SupportedVolumeType | '' {
  return table.find(([field]) => record(source[field]) !== undefined)?.[1] ?? '';
}

function sourceFacts(source: Record<string, unknown>): Pick<VolumeFacts, 'nfs' | 'csi'> {
  const nfs = record(source.nfs);
  const csi = record(source.csi);
  return {
    ...(nfs ? { nfs: { server: text(nfs.server), path: text(nfs.path) } } : {}),
    ...(csi ? { csi: { driver: text(csi.driver), volumeAttributes: stringMap(csi.volumeAttributes) } } : {}),
  };
}

/**
 * The facts of a volume, from its PV (parsePV), else its pod volume (parsePodVolume), plus its
 * PVC's labels and phase (parsePVC). A PVC alone (unbound) has only PVC facts.
 */
export function volumeFactsOf(options: {
  pv?: KubeObject;
  pvc?: KubeObject;
  podVolume?: KubeObject;
}): VolumeFacts {
  const pvSpec = options.pv ? (record(options.pv.spec) ?? {}) : undefined;
  const podVolume = !pvSpec && options.podVolume ? options.podVolume : undefined;
  const capacityText = text(record(pvSpec?.capacity)?.storage);
  const pvcMeta = record(options.pvc?.metadata);
  const pvcLabels = stringMap(pvcMeta?.labels);
  return {
    capacity: (capacityText && parseQuantity(capacityText)) || ZERO_QUANTITY,
    storageClass: text(pvSpec?.storageClassName),
    ...(pvSpec ? sourceFacts(pvSpec) : podVolume ? sourceFacts(podVolume) : {}),
    volumeType: pvSpec
      ? sourceType(pvSpec, PV_SOURCES)
      : podVolume
        ? sourceType(podVolume, POD_VOLUME_SOURCES)
        : '',
    // Velero keeps PVC labels only when there are some: an empty set never matches pvcLabels.
    ...(Object.keys(pvcLabels).length > 0 ? { pvcLabels } : {}),
    pvcPhase: text(record(options.pvc?.status)?.phase),
  };
}

function conditionsMatch(conditions: VolumeConditions, facts: VolumeFacts): boolean {
  if (conditions.capacity) {
    const parsed = parseCapacityRange(conditions.capacity);
    // The contract rejects a bad range before a policy gets here; a bad one matches nothing.
    if (!parsed.ok || !capacityInRange(parsed.range, facts.capacity)) return false;
  }
  const classes = conditions.storageClass ?? [];
  if (classes.length > 0 && (facts.storageClass === '' || !classes.includes(facts.storageClass)))
    return false;
  const nfs = conditions.nfs;
  if (nfs) {
    if (!facts.nfs) return false;
    if (nfs.path && nfs.path !== facts.nfs.path) return false;
    if (nfs.server && nfs.server !== facts.nfs.server) return false;
  }
  const csi = conditions.csi;
  if (csi) {
    if (!facts.csi) return false;
    if (csi.driver) {
      if (csi.driver !== facts.csi.driver) return false;
      for (const [key, value] of Object.entries(csi.volumeAttributes ?? {})) {
        if (facts.csi.volumeAttributes[key] !== value) return false;
      }
    }
  }
  const types = conditions.volumeTypes ?? [];
  if (types.length > 0 && !types.some((t) => t === facts.volumeType)) return false;
  const labels = Object.entries(conditions.pvcLabels ?? {});
  if (labels.length > 0 && !labels.every(([k, v]) => facts.pvcLabels?.[k] === v)) return false;
  const phases = conditions.pvcPhase ?? [];
  if (phases.length > 0 && !phases.includes(facts.pvcPhase)) return false;
  return true;
}

/** The first policy whose conditions all match, with its index; undefined when none does. */
export function matchVolumePolicy(
  policy: ResourcePolicy,
  facts: VolumeFacts,
): { readonly index: number; readonly rule: VolumePolicyRule } | undefined {
  const rules = policy.volumePolicies ?? [];
  const index = rules.findIndex((rule) => conditionsMatch(rule.conditions ?? {}, facts));
  const rule = rules[index];
  return rule ? { index, rule } : undefined;
}
