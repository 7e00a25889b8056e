/**
 * Partial failure as data: warnings and errors by scope, the shape of Velero's results file
 * (`{"errors": Result, "warnings": Result}`, Result = {velero?, cluster?, namespaces?}).
 * Only a failure of the whole run throws; everything else lands here.
 */

export interface Result {
  readonly velero?: readonly string[];
  readonly cluster?: readonly string[];
  readonly namespaces?: Readonly<Record<string, readonly string[]>>;
}

export interface Results {
  readonly errors: Result;
  readonly warnings: Result;
}

export const emptyResults: Results = { errors: {}, warnings: {} };

export function countOf(result: Result): number {
  return (
    (result.velero?.length ?? 0) +
    (result.cluster?.length ?? 0) +
    Object.values(result.namespaces ?? {}).reduce((n, list) => n + list.length, 0)
  );
}

function isEmpty(result: Result): boolean {
  return result.velero === undefined && result.cluster === undefined && result.namespaces === undefined;
}

function mergeResult(a: Result, b: Result): Result {
  // Nothing on either side, as for nearly every block of a backup: what the merge below returns.
  if (isEmpty(a) && isEmpty(b)) return {};
  const namespaces: Record<string, string[]> = {};
  for (const source of [a.namespaces ?? {}, b.namespaces ?? {}]) {
    for (const [ns, list] of Object.entries(source)) namespaces[ns] = [...(namespaces[ns] ?? []), ...list];
  }
  const velero = [...(a.velero ?? []), ...(b.velero ?? [])];
  const cluster = [...(a.cluster ?? []), ...(b.cluster ?? [])];
  return {
    ...(velero.length > 0 ? { velero } : {}),
    ...(cluster.length > 0 ? { cluster } : {}),
    ...(Object.keys(namespaces).length > 0 ? { namespaces } : {}),
  };
}

export function mergeResults(a: Results, b: Results): Results {
  return { errors: mergeResult(a.errors, b.errors), warnings: mergeResult(a.warnings, b.warnings) };
}

/** One message in the right scope: a namespace's, the cluster's, or Lifeboat's own. */
export function resultOf(options: {
  scope: 'velero' | 'cluster' | { namespace: string };
  message: string;
}): Result {
  const { scope, message } = options;
  if (scope === 'velero') return { velero: [message] };
  if (scope === 'cluster') return { cluster: [message] };
  return { namespaces: { [scope.namespace]: [message] } };
}
