/**
 * Restored objects as two restores of the same backed-up objects must agree on them: everything
 * but what the apiserver sets (uid, versions, timestamps, managed fields, status, assigned
 * cluster IPs and node ports, the job controller's uid labels) and the restore's own labels. A
 * node port the sample set explicitly is compared: both tools must keep it.
 */
import { type KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';

type Json = Record<string, unknown>;

/** The kinds the sample holds that a restore creates itself (not controller-made pods). */
const KINDS: readonly (readonly [string, string])[] = [
  ['v1', 'ConfigMap'],
  ['v1', 'Secret'],
  ['v1', 'Service'],
  ['v1', 'ServiceAccount'],
  ['v1', 'PersistentVolumeClaim'],
  ['apps/v1', 'Deployment'],
  ['batch/v1', 'Job'],
  ['rbac.authorization.k8s.io/v1', 'Role'],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
];

const SERVER_SET = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields', 'selfLink'];
const CONTROLLER_UID = ['controller-uid', 'batch.kubernetes.io/controller-uid'];
const RESTORE_LABELS = ['velero.io/backup-name', 'velero.io/restore-name'];

/** The label the sample puts on a Service whose node port it set itself. */
export const EXPLICIT_NODE_PORT_LABEL = 'interop.lifeboat.io/explicit-node-port';

const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

function dropKeys(target: Json, keys: readonly string[]): void {
  for (const key of keys) delete target[key];
}

/**
 * The object without what differs between two restores of the same backed-up object; the
 * namespace it was restored into, where the object names it (binding subjects), reads
 * `<namespace>`.
 */
export function comparable(object: Json, namespace: string): Json {
  const out = structuredClone(object);
  if (Array.isArray(out.subjects))
    out.subjects = out.subjects.map((s: Json) =>
      s.namespace === namespace ? { ...s, namespace: '<namespace>' } : s,
    );
  const metadata = obj(out.metadata);
  dropKeys(metadata, [...SERVER_SET, 'namespace']);
  dropKeys(obj(metadata.labels), RESTORE_LABELS);
  // Only the restore's labels were there (a ServiceAccount the cluster made first gets none).
  if (metadata.labels !== undefined && Object.keys(obj(metadata.labels)).length === 0) delete metadata.labels;
  delete out.status;
  const spec = obj(out.spec);
  if (out.kind === 'Service') {
    if (spec.clusterIP !== 'None') dropKeys(spec, ['clusterIP', 'clusterIPs']);
    // An assigned port differs from restore to restore; one set explicitly must come back.
    const explicit = obj(metadata.labels)[EXPLICIT_NODE_PORT_LABEL] === 'true';
    if (!explicit) for (const port of Array.isArray(spec.ports) ? spec.ports : []) delete obj(port).nodePort;
  }
  if (out.kind === 'Job') {
    dropKeys(obj(obj(spec.selector).matchLabels), CONTROLLER_UID);
    dropKeys(obj(obj(obj(spec.template).metadata).labels), CONTROLLER_UID);
  }
  if (out.kind === 'ServiceAccount') delete out.secrets;
  return out;
}

/** Each kind's objects in the namespace, by `<Kind>/<name>`, comparable. */
export async function comparableObjects(
  kc: KubeConfig,
  namespace: string,
  extraKinds: readonly (readonly [string, string])[] = [],
): Promise<Record<string, Json>> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const out: Record<string, Json> = {};
  for (const [apiVersion, kind] of [...KINDS, ...extraKinds]) {
    const listed = await api.list(apiVersion, kind, namespace);
    for (const item of listed.items) {
      const object: Json = { ...(item as unknown as Json), apiVersion, kind };
      const name = String(obj(object.metadata).name);
      // The cluster makes these with every namespace; the restores need not agree on them.
      if (kind === 'ConfigMap' && name === 'kube-root-ca.crt') continue;
      out[`${kind}/${name}`] = comparable(object, namespace);
    }
  }
  return out;
}

/** Where two sets of restored objects differ: missing on either side, or field by field. */
export function differences(a: Record<string, Json>, b: Record<string, Json>): string[] {
  const problems: string[] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (!(key in a)) problems.push(`${key}: only in the second`);
    else if (!(key in b)) problems.push(`${key}: only in the first`);
    else if (JSON.stringify(sorted(a[key])) !== JSON.stringify(sorted(b[key])))
      problems.push(`${key}: ${JSON.stringify(sorted(a[key]))} != ${JSON.stringify(sorted(b[key]))}`);
  }
  return problems.sort();
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sorted((value as Json)[k])]),
    );
  return value;
}
