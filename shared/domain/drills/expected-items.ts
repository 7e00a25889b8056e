/**
 * What a DR drill expects to find in the target cluster: every item of the backup's resource
 * list (Velero's `{"apps/v1/Deployment": ["ns/name", …]}`), under the restore's namespace
 * mappings, and how each one is checked. Items Velero never restores, and those the target's own
 * controllers own or replace (pods, ReplicaSets, endpoints, the namespace CA ConfigMap), are
 * listed as not checked with the reason, never silently dropped. Pure: no cluster, no store.
 */
import { NON_RESTORABLE } from '../restore/order.js';

/** How an item is compared with what the backup holds. */
export type ItemCheck =
  /** Present, and equal in data (Secrets, ConfigMaps) or in every field but metadata/status (CRs). */
  | 'data'
  /** Present. */
  | 'presence'
  /** Not checked: `reason` says why. */
  | 'none';

/** One workload the drill waits for: Deployments and StatefulSets to be available, PVCs bound. */
export type Readiness = 'available' | 'bound';

export interface ExpectedItem {
  readonly apiVersion: string;
  readonly kind: string;
  /** The namespace in the backup ('' for cluster-scoped items). */
  readonly sourceNamespace: string;
  /** The namespace in the target cluster, after the mappings. */
  readonly namespace: string;
  readonly name: string;
  readonly check: ItemCheck;
  readonly readiness?: Readiness;
  readonly reason?: string;
}

/** Kinds whose objects the target's controllers create or replace: their owners are checked. */
const CONTROLLER_OWNED_KINDS: Readonly<Record<string, string>> = {
  'v1/Pod': 'pods are recreated by their controllers; their owners are waited on',
  'apps/v1/ReplicaSet': 'replica sets are managed by their Deployments, which are waited on',
  'apps/v1/ControllerRevision': 'controller revisions are written by their StatefulSets and DaemonSets',
  'v1/Endpoints': 'endpoints are written by the endpoints controller from Services',
  'discovery.k8s.io/v1/EndpointSlice': 'endpoint slices are written by the controller from Services',
  'v1/Event': 'Velero never restores events',
  'events.k8s.io/v1/Event': 'Velero never restores events',
  // Velero: a PV re-provisioned for a CSI snapshot gets a new name, one of a mapped namespace
  // that exists is renamed velero-clone-<uuid>.
  'v1/PersistentVolume':
    'a volume may come back re-provisioned or renamed (velero-clone-…); its claim is waited on until bound',
};

/** Built-in API groups: objects of any other group (or of a CRD the backup holds) are custom resources. */
const BUILT_IN_GROUPS = new Set(['', 'apps', 'batch', 'autoscaling', 'policy']);

/** Kinds the drill waits on, and for what. */
const READINESS: Readonly<Record<string, Readiness>> = {
  'apps/v1/Deployment': 'available',
  'apps/v1/StatefulSet': 'available',
  'v1/PersistentVolumeClaim': 'bound',
};

function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** `<plural>.<group>` of every CRD the backup holds, to tell its custom resources by group. */
function crdGroups(resourceList: Readonly<Record<string, readonly string[]>>): Set<string> {
  const groups = new Set<string>();
  for (const [key, names] of Object.entries(resourceList))
    if (key.startsWith('apiextensions.k8s.io/') && key.endsWith('/CustomResourceDefinition'))
      for (const name of names) groups.add(name.slice(name.indexOf('.') + 1));
  return groups;
}

function isCustomResource(group: string, crds: ReadonlySet<string>): boolean {
  if (crds.has(group)) return true;
  return !BUILT_IN_GROUPS.has(group) && !group.endsWith('.k8s.io');
}

/** How an item of this kind and name is checked, and why not when it is not. */
function checkOf(options: { key: string; name: string; crds: ReadonlySet<string> }): {
  check: ItemCheck;
  reason?: string;
} {
  const { key, name } = options;
  const owned = CONTROLLER_OWNED_KINDS[key];
  if (owned) return { check: 'none', reason: owned };
  const kind = key.slice(key.lastIndexOf('/') + 1);
  const group = groupOf(key.slice(0, key.lastIndexOf('/')));
  // Velero's plurals of its non-restorable kinds all follow the regular English rule.
  const lower = kind.toLowerCase();
  const plural = `${lower.endsWith('y') ? `${lower.slice(0, -1)}ies` : `${lower}s`}${group ? `.${group}` : ''}`;
  if (NON_RESTORABLE.includes(plural)) return { check: 'none', reason: 'Velero never restores this kind' };
  if (key === 'v1/ConfigMap' && name === 'kube-root-ca.crt')
    return { check: 'none', reason: "each namespace's CA bundle is the target cluster's own" };
  if (key === 'v1/Secret' || key === 'v1/ConfigMap') return { check: 'data' };
  return isCustomResource(group, options.crds) ? { check: 'data' } : { check: 'presence' };
}

/** Every item of the resource list, mapped into the target's namespaces, in the list's order. */
export function expectedItems(options: {
  readonly resourceList: Readonly<Record<string, readonly string[]>>;
  readonly namespaceMapping?: Readonly<Record<string, string>>;
}): ExpectedItem[] {
  const crds = crdGroups(options.resourceList);
  const mapping = options.namespaceMapping ?? {};
  return Object.entries(options.resourceList).flatMap(([key, entries]) => {
    const slash = key.lastIndexOf('/');
    const apiVersion = key.slice(0, slash);
    const kind = key.slice(slash + 1);
    return entries.map((entry): ExpectedItem => {
      const cut = entry.indexOf('/');
      const sourceNamespace = cut < 0 ? '' : entry.slice(0, cut);
      const name = cut < 0 ? entry : entry.slice(cut + 1);
      // A Namespace item is itself renamed by its mapping, as Velero restores it.
      const mappedName = key === 'v1/Namespace' ? (mapping[name] ?? name) : name;
      const checked = checkOf({ key, name, crds });
      const readiness = READINESS[key];
      return {
        apiVersion,
        kind,
        sourceNamespace,
        namespace: sourceNamespace ? (mapping[sourceNamespace] ?? sourceNamespace) : '',
        name: mappedName,
        ...checked,
        ...(readiness && checked.check !== 'none' ? { readiness } : {}),
      };
    });
  });
}

/** `apps/v1/Deployment shop/web`: how a drill names an item in its report. */
export function itemLabel(item: Pick<ExpectedItem, 'apiVersion' | 'kind' | 'namespace' | 'name'>): string {
  return `${item.apiVersion}/${item.kind} ${item.namespace ? `${item.namespace}/` : ''}${item.name}`;
}
