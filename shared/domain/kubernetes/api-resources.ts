/**
 * The cluster's API resources as discovery describes them, and Velero's rules over them:
 * resolving the names users write (plural, singular, short name, kind, `resource.group`),
 * the collection order (core group first, pods → PVCs → PVs first) and the de-duplication of
 * resources served under two groups. Pure: the discovery document is given.
 */

export interface ApiResource {
  /** API group; '' for the core group. */
  readonly group: string;
  /** The server's preferred version of the group. */
  readonly version: string;
  /** Plural resource name, e.g. `deployments`. */
  readonly resource: string;
  readonly kind: string;
  readonly singular?: string;
  readonly shortNames: readonly string[];
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
}

/** `GroupResource.String()` in Velero: `pods`, `deployments.apps`. */
export function groupResource(r: { readonly group: string; readonly resource: string }): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

/** `apps/v1` or `v1`: the apiVersion of objects of this resource. */
export function apiVersionOf(r: { readonly group: string; readonly version: string }): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/**
 * Resources served by two groups, backed up once (Velero `cohabitatingResources`): the first
 * one met in collection order wins.
 */
const COHABITING: Readonly<Record<string, readonly string[]>> = {
  deployments: ['extensions', 'apps'],
  daemonsets: ['extensions', 'apps'],
  replicasets: ['extensions', 'apps'],
  networkpolicies: ['extensions', 'networking.k8s.io'],
  events: ['', 'events.k8s.io'],
};

/** Resources a backup can read: listable and gettable, and not a subresource. */
export function backupable(r: ApiResource): boolean {
  return !r.resource.includes('/') && r.verbs.includes('list') && r.verbs.includes('get');
}

const CORE_FIRST = ['pods', 'persistentvolumeclaims', 'persistentvolumes'];

/**
 * Velero's collection order: the core group first, with pods, persistentvolumeclaims and
 * persistentvolumes ahead of the rest; other groups in discovery order; cohabiting resources
 * kept only once.
 */
export function collectionOrder(resources: readonly ApiResource[]): ApiResource[] {
  const usable = resources.filter(backupable);
  const core = usable.filter((r) => r.group === '');
  const rank = (r: ApiResource): number => {
    const i = CORE_FIRST.indexOf(r.resource);
    return i < 0 ? CORE_FIRST.length : i;
  };
  const ordered = [...core.sort((a, b) => rank(a) - rank(b)), ...usable.filter((r) => r.group !== '')];
  const seen = new Set<string>();
  return ordered.filter((r) => {
    const groups = COHABITING[r.resource];
    if (!groups?.includes(r.group)) return true;
    if (seen.has(r.resource)) return false;
    seen.add(r.resource);
    return true;
  });
}

/**
 * Resolves a user-written resource name to its group-resource, as `kubectl` and Velero do:
 * `pods`, `pod`, `po`, `Pod`, `deployments.apps`, `deploy`. `*` stays `*`.
 * Returns undefined for a name the cluster does not serve.
 */
export function resolveResourceName(name: string, resources: readonly ApiResource[]): string | undefined {
  if (name === '*') return '*';
  const lower = name.toLowerCase();
  const matches = (r: ApiResource, n: string): boolean =>
    r.resource === n || r.singular === n || r.shortNames.includes(n) || r.kind.toLowerCase() === n;
  const dot = lower.indexOf('.');
  if (dot > 0) {
    const head = lower.slice(0, dot);
    const group = lower.slice(dot + 1);
    const grouped = resources.find((r) => r.group === group && matches(r, head));
    if (grouped) return groupResource(grouped);
  }
  const ordered = collectionOrder(resources);
  const found = ordered.find((r) => matches(r, lower)) ?? resources.find((r) => matches(r, lower));
  return found ? groupResource(found) : undefined;
}
