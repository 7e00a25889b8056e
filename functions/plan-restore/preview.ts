/**
 * A dry run's preview: what a restore would do with each planned item, asking the cluster but
 * changing nothing (create, update by existingResourcePolicy, or skip, and why).
 */
import type { PlannedItem, RestorePlan } from '../../shared/contracts/restore-run.js';
import { addedWithNamespace } from '../../shared/domain/kubernetes/namespace-defaults.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import { existingAction } from '../restore-phase/compare.js';
import { hookPreview } from './plan-item.js';

/**
 * What a restore would do with each item, step by step (one step without a recipe) and in phase
 * order within a step, asking the cluster but changing nothing.
 */
export async function preview(options: {
  sequence: readonly { step?: number; order: readonly string[]; items: readonly PlannedItem[] }[];
  deps: { readonly cluster: Pick<ClusterWriter, 'read'> };
  policy: 'none' | 'update';
}): Promise<NonNullable<RestorePlan['preview']>> {
  const out: NonNullable<RestorePlan['preview']> = [];
  // In a namespace the restore creates, the cluster itself adds these before the restore gets to
  // them; the restore then finds them existing.
  const newNamespaces = new Set<string>();
  const all = options.sequence.flatMap((s) => s.items);
  for (const item of all.filter((i) => i.groupResource === 'namespaces')) {
    const exists = await options.deps.cluster.read({ resource: 'namespaces', object: item.object });
    if (!exists)
      newNamespaces.add(String((item.object.metadata as { name?: unknown } | undefined)?.name ?? ''));
  }
  const addedByCluster = (phase: string, namespace: string | undefined, name: string | undefined): boolean =>
    namespace !== undefined && newNamespaces.has(namespace) && addedWithNamespace(phase, name);
  for (const { step, order, items } of options.sequence) {
    const at = step === undefined ? {} : { recipeStep: step };
    for (const phase of order) {
      for (const item of items.filter((i) => i.groupResource === phase)) {
        const meta = (item.object.metadata ?? {}) as { namespace?: string; name?: string };
        const label = `${meta.namespace ? `${meta.namespace}/` : ''}${meta.name ?? ''}`;
        if (addedByCluster(phase, meta.namespace, meta.name)) {
          // The backed-up default ServiceAccount is merged into the one the cluster creates.
          const merged =
            phase === 'serviceaccounts' &&
            existingAction({
              existing: {
                apiVersion: 'v1',
                kind: 'ServiceAccount',
                metadata: { name: meta.name, namespace: meta.namespace },
              },
              desired: item.object,
              policy: options.policy,
              groupResource: phase,
            }).action === 'update';
          out.push(
            merged
              ? { phase, item: label, action: 'update', ...at }
              : {
                  phase,
                  item: label,
                  action: 'skip',
                  reason: 'the cluster creates it with the namespace',
                  ...at,
                },
          );
          continue;
        }
        const existing = await options.deps.cluster.read({
          resource: phase.split('.')[0] ?? phase,
          object: item.object,
        });
        if (!existing) {
          // A pod's restore hooks show on creates only: Velero runs them for pods it creates.
          out.push({ phase, item: label, action: 'create', ...at, ...hookPreview(item) });
          continue;
        }
        const decided = existingAction({
          existing,
          desired: item.object,
          policy: options.policy,
          groupResource: phase,
        });
        out.push(
          decided.action === 'update'
            ? { phase, item: label, action: 'update', ...at }
            : { phase, item: label, action: 'skip', reason: decided.reason, ...at },
        );
      }
    }
  }
  return out;
}
