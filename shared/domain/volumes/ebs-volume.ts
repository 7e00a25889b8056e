/**
 * What a native EBS snapshot needs to know of a PersistentVolume: its EBS volume id, its
 * availability zone, and the tags the snapshot carries. Rules are velero-plugin-for-aws
 * `GetVolumeID` and Velero `item_backupper.go` (zone lookup, snapshot tags).
 * Pure: reads the PV as the apiserver serves it and never throws on odd objects.
 */

type KubeObject = Readonly<Record<string, unknown>>;

export const EBS_CSI_DRIVER = 'ebs.csi.aws.com';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const ZONE_LABEL_DEPRECATED = 'failure-domain.beta.kubernetes.io/zone';
export const EBS_CSI_ZONE_KEY = 'topology.ebs.csi.aws.com/zone';

/** Velero's node-affinity keys that name a zone; the Azure and GKE keys cannot name an EBS zone. */
const NODE_AFFINITY_ZONE_KEYS = [EBS_CSI_ZONE_KEY, ZONE_LABEL, ZONE_LABEL_DEPRECATED];

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// The plugin's `regexp.MustCompile("vol-.*").FindString`: everything from the first "vol-".
const volumeIdIn = (text: unknown): string | undefined =>
  typeof text === 'string' ? /vol-.*/.exec(text)?.[0] : undefined;

/**
 * The EBS volume id of a PV: the CSI volume handle when the driver is ebs.csi.aws.com, else the
 * in-tree `awsElasticBlockStore.volumeID` (`vol-…` or `aws://<zone>/vol-…`). Undefined when the
 * PV is not an EBS volume (the plugin then returns "" and Velero finds no volume snapshotter).
 */
export function ebsVolumeIdOf(pv: KubeObject): string | undefined {
  const spec = record(pv.spec) ?? {};
  const csi = record(spec.csi);
  // A CSI PV of another driver falls through to the in-tree check, as in the plugin.
  if (csi && csi.driver === EBS_CSI_DRIVER) {
    const id = volumeIdIn(csi.volumeHandle);
    if (id) return id;
  }
  return volumeIdIn(record(spec.awsElasticBlockStore)?.volumeID);
}

/**
 * The availability zone of a PV, in Velero's order: the `topology.kubernetes.io/zone` label, the
 * deprecated `failure-domain.beta.kubernetes.io/zone` label, then a node-affinity `In`
 * requirement on a zone key (first value). A label that is present wins even when empty, as in
 * Velero. Lifeboat adds one last fallback Velero lacks: the zone of an in-tree
 * `aws://<zone>/vol-…` volume id. Undefined when none names a zone.
 */
export function availabilityZoneOf(pv: KubeObject): string | undefined {
  const labels = record(record(pv.metadata)?.labels) ?? {};
  for (const key of [ZONE_LABEL, ZONE_LABEL_DEPRECATED]) {
    if (typeof labels[key] === 'string') return labels[key] as string;
  }
  const spec = record(pv.spec) ?? {};
  const terms = list(record(record(record(spec.nodeAffinity)?.required))?.nodeSelectorTerms);
  for (const term of terms) {
    for (const expression of list(record(term)?.matchExpressions)) {
      const e = record(expression) ?? {};
      const values = list(e.values);
      if (
        typeof e.key === 'string' &&
        NODE_AFFINITY_ZONE_KEYS.includes(e.key) &&
        e.operator === 'In' &&
        typeof values[0] === 'string'
      ) {
        return values[0];
      }
    }
  }
  const inTree = record(spec.awsElasticBlockStore)?.volumeID;
  const zone = typeof inTree === 'string' ? /^aws:\/\/([^/]+)\/vol-/.exec(inTree)?.[1] : undefined;
  return zone || undefined;
}

export interface Tag {
  readonly key: string;
  readonly value: string;
}

/** EC2 allows 50 user tags per resource; more fails the whole CreateSnapshot call. */
export const MAX_TAGS = 50;

const isReserved = (key: string): boolean => key.toLowerCase().startsWith('aws:');
const isClusterOwnership = (key: string): boolean =>
  key.startsWith('kubernetes.io/cluster/') || key === 'KubernetesCluster';

/**
 * The tags of a native snapshot, as Velero sets them: every backup label, `velero.io/backup` and
 * `velero.io/pv`, then the volume's own tags unless Velero set the same key (Velero's win).
 * Two Lifeboat guards the plugin lacks, reported in `dropped`: volume tags under the reserved
 * `aws:` prefix (EC2 refuses to set them) and volume tags beyond EC2's 50-tag limit.
 */
export function snapshotTags(options: {
  backupName: string;
  backupLabels?: Readonly<Record<string, string>>;
  pvName: string;
  volumeTags?: readonly Tag[];
}): { tags: Tag[]; dropped: string[] } {
  const velero = new Map<string, string>(Object.entries(options.backupLabels ?? {}));
  velero.set('velero.io/backup', options.backupName);
  velero.set('velero.io/pv', options.pvName);
  const tags: Tag[] = [...velero].map(([key, value]) => ({ key, value }));
  const dropped: string[] = [];
  for (const tag of options.volumeTags ?? []) {
    if (velero.has(tag.key) || tags.some((t) => t.key === tag.key)) continue;
    if (isReserved(tag.key) || tags.length >= MAX_TAGS) dropped.push(tag.key);
    else tags.push(tag);
  }
  return { tags, dropped };
}

/**
 * The tags of a volume re-created from a snapshot: the snapshot's tags (Velero
 * CreateVolumeFromSnapshot), with the cluster ownership tags rewritten for `clusterName` when
 * given (Velero's AWS_CLUSTER_NAME: `kubernetes.io/cluster/<name>=owned`, `KubernetesCluster`),
 * then `extra` tags, which win. Reserved `aws:` keys are left out: EC2 refuses to set them.
 */
export function restoredVolumeTags(options: {
  snapshotTags: readonly Tag[];
  clusterName?: string;
  extra?: readonly Tag[];
}): Tag[] {
  // Ownership and the caller's tags come first: a retried step finds its volume by them, so they
  // are never the ones cut at EC2's tag limit; the snapshot's own tags fill what room is left.
  const tags = new Map<string, string>();
  if (options.clusterName) {
    tags.set(`kubernetes.io/cluster/${options.clusterName}`, 'owned');
    tags.set('KubernetesCluster', options.clusterName);
  }
  for (const tag of options.extra ?? []) if (!isReserved(tag.key)) tags.set(tag.key, tag.value);
  for (const tag of options.snapshotTags) {
    if (tags.size >= MAX_TAGS) break;
    if (isReserved(tag.key) || (options.clusterName && isClusterOwnership(tag.key))) continue;
    if (!tags.has(tag.key)) tags.set(tag.key, tag.value);
  }
  return [...tags].slice(0, MAX_TAGS).map(([key, value]) => ({ key, value }));
}

/**
 * Whether a KMS key reference is a key ARN (`arn:<partition>:kms:<region>:<account>:key/<id>`),
 * the only form EBS StartSnapshot's KmsKeyArn takes (EC2 CreateVolume also takes key ids and
 * aliases).
 */
export function isKmsKeyArn(value: string): boolean {
  return /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[^/]+$/.test(value);
}
