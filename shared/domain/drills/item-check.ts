/**
 * Whether a restored item holds what the backup held: for Secrets and ConfigMaps their data, for
 * custom resources every field but `metadata` and `status`. A difference is named by the keys or
 * fields that differ, never by their values: a drill's report and log must never carry a
 * Secret's data. Pure.
 */
import type { ExpectedItem } from './expected-items.js';

/** Fields of an object that are not its data: who it is and what the cluster says of it. */
const NOT_DATA = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/** A canonical text of a JSON value: keys sorted at every depth. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** The top-level fields compared for this kind of item. */
function comparedFields(
  item: Pick<ExpectedItem, 'apiVersion' | 'kind'>,
  objects: readonly object[],
): string[] {
  const key = `${item.apiVersion}/${item.kind}`;
  if (key === 'v1/Secret') return ['data', 'type'];
  if (key === 'v1/ConfigMap') return ['data', 'binaryData'];
  const fields = new Set<string>();
  for (const object of objects)
    for (const field of Object.keys(object)) if (!NOT_DATA.has(field)) fields.add(field);
  return [...fields].sort();
}

/** A Secret's `stringData` is written into `data` by the apiserver: compare what it stores. */
function stored(object: Record<string, unknown>): Record<string, unknown> {
  const stringData = object.stringData as Record<string, string> | undefined;
  if (!stringData) return object;
  const data = { ...((object.data as Record<string, string> | undefined) ?? {}) };
  for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(v, 'utf8').toString('base64');
  const { stringData: _, ...rest } = object;
  return { ...rest, data };
}

/**
 * What differs between the backed-up object and the live one, as field or key paths
 * (`data.password`, `spec`); empty when they are equal. Values are never returned.
 */
export function dataDifferences(options: {
  readonly item: Pick<ExpectedItem, 'apiVersion' | 'kind'>;
  readonly backedUp: Record<string, unknown>;
  readonly live: Record<string, unknown>;
}): string[] {
  const backedUp = stored(options.backedUp);
  const live = stored(options.live);
  const differences: string[] = [];
  for (const field of comparedFields(options.item, [backedUp, live])) {
    const want = backedUp[field];
    const have = live[field];
    if (canonical(want ?? null) === canonical(have ?? null)) continue;
    const keyed = (field === 'data' || field === 'binaryData') && isRecord(want) && isRecord(have);
    if (!keyed) {
      differences.push(field);
      continue;
    }
    const keys = new Set([...Object.keys(want), ...Object.keys(have)]);
    for (const key of [...keys].sort())
      if (canonical(want[key] ?? null) !== canonical(have[key] ?? null)) differences.push(`${field}.${key}`);
  }
  return differences;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
