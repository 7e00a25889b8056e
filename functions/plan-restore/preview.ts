/**
 * A dry run's preview: what a restore would do with each planned item, asking the cluster but
 * changing nothing (create, update by existingResourcePolicy, or skip, and why).
 */
import type { PlannedItem, RestorePlan } from '../../shared/contracts/restore-run.js';
import { addedWithNamespace } from '../../shared/domain/kubernetes/namespace-defaults.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import { existingAction } from '../restore-phase/compare.js';
import { hookPreview } from './plan-item.js';

type Preview = NonNullable<RestorePlan['preview']>;
type PreviewEntry = Preview[number];

/**
 * What a restore would do with each item, step by step (one step without a recipe) and in phase
 * order within a step, asking the cluster but changing nothing.
 */
export async function preview(options: {
  sequence: readonly { step?: number; order: readonly string[]; items: readonly PlannedItem[] }[];
  deps: { readonly cluster: Pick<ClusterWriter, 'read'> };
  policy: 'none' | 'update';
}): Promise<Preview> {
  const out: Preview = [];
  const { cluster } = options.deps;
  const newNamespaces = await namespacesCreated({
    items: options.sequence.flatMap((s) => s.items),
    cluster,
  });
  for (const { step, order, items } of options.sequence) {
    const at = step === undefined ? {} : { recipeStep: step };
    for (const phase of order) {
      for (const item of items.filter((i) => i.groupResource === phase)) {
        out.push(await previewItem({ item, phase, at, policy: options.policy, cluster, newNamespaces }));
      }
    }
  }
  return out;
}

/**
 * In a namespace the restore creates, the cluster itself adds these before the restore gets to
 * them; the restore then finds them existing.
 */
async function namespacesCreated(options: {
  items: readonly PlannedItem[];
  cluster: Pick<ClusterWriter, 'read'>;
}): Promise<Set<string>> {
  const newNamespaces = new Set<string>();
  for (const item of options.items.filter((i) => i.groupResource === 'namespaces')) {
    const exists = await options.cluster.read({ resource: 'namespaces', object: item.object });
    if (!exists)
      newNamespaces.add(String((item.object.metadata as { name?: unknown } | undefined)?.name ?? ''));
  }
  return newNamespaces;
}

interface ItemPreview {
  readonly item: PlannedItem;
  readonly phase: string;
  readonly at: { recipeStep?: number };
  readonly policy: 'none' | 'update';
  readonly cluster: Pick<ClusterWriter, 'read'>;
  readonly newNamespaces: ReadonlySet<string>;
}

/** One item: created, updated, or skipped and why, as RestorePhase would find it. */
async function previewItem(options: ItemPreview): Promise<PreviewEntry> {
  const { item, phase, at, policy } = options;
  const meta = (item.object.metadata ?? {}) as { namespace?: string; name?: string };
  const label = `${meta.namespace ? `${meta.namespace}/` : ''}${meta.name ?? ''}`;
  const addedByCluster =
    meta.namespace !== undefined &&
    options.newNamespaces.has(meta.namespace) &&
    addedWithNamespace(phase, meta.name);
  if (addedByCluster) return await clusterDefaultPreview({ ...options, meta, label });
  const existing = await options.cluster.read({
    resource: phase.split('.')[0] ?? phase,
    object: item.object,
  });
  if (!existing) {
    // A pod's restore hooks show on creates only: Velero runs them for pods it creates.
    return { phase, item: label, action: 'create', ...at, ...hookPreview(item) };
  }
  const decided = existingAction({ existing, desired: item.object, policy, groupResource: phase });
  return decided.action === 'update'
    ? { phase, item: label, action: 'update', ...at }
    : { phase, item: label, action: 'skip', reason: decided.reason, ...at };
}

/**
 * An object the cluster adds with a new namespace, compared with what the cluster will add, as
 * the restore will find it: the root-CA ConfigMap holds in every namespace what it holds in
 * `default`, so one that differs (another cluster's CA) gets the restore's warning; the default
 * ServiceAccount is merged, or skipped.
 */
async function clusterDefaultPreview(
  options: ItemPreview & { meta: { namespace?: string; name?: string }; label: string },
): Promise<PreviewEntry> {
  const { phase, label, at } = options;
  if (phase === 'configmaps') {
    const published = await options.cluster.read({
      resource: 'configmaps',
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: options.meta.name, namespace: 'default' },
      },
    });
    // A cluster without the root-CA publisher: the restore creates it after its wait.
    if (!published) return { phase, item: label, action: 'create', ...at };
    const existing = {
      ...published,
      metadata: { ...(published.metadata as object), namespace: options.meta.namespace },
    };
    const decided = existingAction({
      existing,
      desired: options.item.object,
      policy: options.policy,
      groupResource: phase,
    });
    if (decided.action === 'update') return { phase, item: label, action: 'update', ...at };
    const reason = decided.warning ?? 'the cluster creates it with the namespace, as backed up';
    return { phase, item: label, action: 'skip', reason, ...at };
  }
  return serviceAccountPreview(options);
}

/** The backed-up default ServiceAccount, merged into the one the cluster creates, or skipped. */
function serviceAccountPreview(
  options: ItemPreview & { meta: { namespace?: string; name?: string }; label: string },
): PreviewEntry {
  const { phase, meta, label, at } = options;
  // The backed-up default ServiceAccount is merged into the one the cluster creates.
  const merged =
    phase === 'serviceaccounts' &&
    existingAction({
      existing: {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: meta.name, namespace: meta.namespace },
      },
      desired: options.item.object,
      policy: options.policy,
      groupResource: phase,
    }).action === 'update';
  return merged
    ? { phase, item: label, action: 'update', ...at }
    : { phase, item: label, action: 'skip', reason: 'the cluster creates it with the namespace', ...at };
}
