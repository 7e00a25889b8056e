/**
 * Kubernetes strategic merge patch for built-in objects, as Velero's resource modifiers apply
 * `strategicPatches` (k8s.io/apimachinery strategicpatch.StrategicMergeMapPatch against the
 * typed object): maps merge key by key and `null` deletes; lists with a merge key (containers by
 * name, ports by containerPort, …: see strategic-merge-schema.ts) merge element by element,
 * lists of scalars with a merge strategy (finalizers) merge as sets, every other list is
 * replaced. Directives: `$patch: replace|merge|delete` on a map or a list element,
 * `{$patch: replace}` in a list, `$retainKeys`, `$deleteFromPrimitiveList/<field>`;
 * `$setElementOrder/<field>` is accepted and ignored.
 * Pure; never applies a strategic patch to a kind Velero's scheme does not register (custom
 * resources included): that is an error, as in Velero, never a silent JSON merge.
 */
import { LifeboatError } from '../errors.js';
import { isJsonObject, type JsonObject, jsonEqual } from './merge-patch.js';
import { type FieldSchema, rootTypeOf, TYPES } from './strategic-merge-schema.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

function fail(message: string): never {
  throw new LifeboatError(message);
}

function withoutDirective(map: JsonObject): JsonObject {
  const { [DIRECTIVE]: _directive, ...rest } = map;
  return rest;
}

/** The patched map, or undefined when the patch deletes it (`$patch: delete`). */
function mergeMap(options: {
  original: JsonObject;
  patch: JsonObject;
  type: string | undefined;
  path: string;
}): JsonObject | undefined {
  const { original, patch, type, path } = options;
  const directive = patch[DIRECTIVE];
  if (directive === 'replace') return structuredClone(withoutDirective(patch));
  if (directive === 'delete') return undefined;
  if (directive !== undefined && directive !== 'merge')
    fail(`${path || '/'}: unknown $patch directive ${JSON.stringify(directive)}`);
  const fields = type ? TYPES[type] : undefined;
  const out = structuredClone(original);
  const deletions: [string, unknown][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      deletions.push([key.slice(DELETE_FROM_PRIMITIVE_LIST.length), value]);
      continue;
    }
    const at = `${path}/${key}`;
    if (value === null) {
      delete out[key];
    } else if (isJsonObject(value)) {
      const before = out[key];
      const merged = mergeMap({
        original: isJsonObject(before) ? before : {},
        patch: value,
        type: fields?.[key]?.type,
        path: at,
      });
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    } else if (Array.isArray(value)) {
      out[key] = mergeList({ original: out[key], patch: value, field: fields?.[key], path: at });
    } else {
      out[key] = value;
    }
  }
  for (const [field, values] of deletions) {
    if (!Array.isArray(values)) fail(`${path}/${DELETE_FROM_PRIMITIVE_LIST}${field}: must be a list`);
    const list = out[field];
    if (Array.isArray(list)) out[field] = list.filter((v) => !values.some((d) => jsonEqual(d, v)));
  }
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) fail(`${path}/${RETAIN_KEYS}: must be a list`);
    for (const key of Object.keys(out)) if (!retain.includes(key)) delete out[key];
  }
  return out;
}

function mergeList(options: {
  original: unknown;
  patch: readonly unknown[];
  field: FieldSchema | undefined;
  path: string;
}): unknown[] {
  const { patch, field, path } = options;
  // Kubernetes: a list without a merge strategy is replaced whole.
  if (!field?.mergeKey && !field?.mergeScalars) return structuredClone([...patch]);
  const original = Array.isArray(options.original) ? structuredClone(options.original) : [];
  if (field.mergeScalars) {
    for (const value of patch) if (!original.some((v) => jsonEqual(v, value))) original.push(value);
    return original;
  }
  const key = field.mergeKey ?? '';
  const replaceAll = patch.some((e) => isJsonObject(e) && e[DIRECTIVE] === 'replace');
  if (replaceAll)
    return patch
      .filter((e) => !(isJsonObject(e) && e[DIRECTIVE] === 'replace'))
      .map((e) => (isJsonObject(e) ? withoutDirective(e) : e));
  const out = original;
  for (const [i, element] of patch.entries()) {
    if (!isJsonObject(element))
      fail(`${path}[${i}]: an element of a list merged by "${key}" must be an object`);
    const keyValue = element[key];
    if (keyValue === undefined) fail(`${path}[${i}]: does not contain the merge key "${key}"`);
    const index = out.findIndex((e) => isJsonObject(e) && jsonEqual(e[key], keyValue));
    if (element[DIRECTIVE] === 'delete') {
      if (index >= 0) out.splice(index, 1);
      continue;
    }
    const before = index >= 0 ? out[index] : undefined;
    const merged = mergeMap({
      original: isJsonObject(before) ? before : {},
      patch: element,
      type: field.type,
      path: `${path}[${String(keyValue)}]`,
    });
    if (index >= 0) {
      if (merged === undefined) out.splice(index, 1);
      else out[index] = merged;
    } else if (merged !== undefined) {
      out.push(merged);
    }
  }
  return out;
}

/**
 * The object with the strategic merge patch applied. Throws LifeboatError when the kind takes
 * no strategic patch, or when the patch is malformed (a merged list element without its key,
 * an unknown directive, deleting the whole object).
 */
export function applyStrategicMergePatch(object: JsonObject, patch: JsonObject): JsonObject {
  const apiVersion = String(object.apiVersion ?? '');
  const kind = String(object.kind ?? '');
  const root = rootTypeOf(apiVersion, kind);
  if (!root)
    fail(
      `no kind "${kind}" is registered for version "${apiVersion}": strategic merge patches apply to ` +
        'core/v1, apps/v1 and batch/v1 objects only (use mergePatches or patches)',
    );
  const merged = mergeMap({ original: object, patch, type: root, path: '' });
  if (merged === undefined) fail('$patch: delete cannot delete the whole object');
  return merged;
}
