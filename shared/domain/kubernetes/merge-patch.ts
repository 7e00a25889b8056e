/**
 * JSON merge patch (RFC 7386): applying one, and computing the one that turns an object into
 * another (as evanphx/json-patch's MergePatch and CreateMergePatch, which Velero uses for
 * resource modifiers' mergePatches and for ServiceAccount merges). Pure: inputs are never
 * mutated, results share no structure with them.
 */

export type JsonObject = { [key: string]: unknown };

export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Sets an own property, whatever its name: a key such as `__proto__`, which JSON.parse keeps as
 * data, must stay data here too rather than change the object's prototype.
 */
function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** RFC 7386 §2: objects merge key by key, `null` removes a key, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return structuredClone(patch);
  const out: JsonObject = isJsonObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setOwn(out, key, applyMergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}

/** Deep equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]))
    );
  }
  return false;
}

/**
 * The merge patch that turns `from` into `to`, or undefined when they are equal. Arrays are
 * replaced whole (merge patches cannot address elements); keys only in `from` become `null`.
 */
export function createMergePatch(from: JsonObject, to: JsonObject): JsonObject | undefined {
  const patch: JsonObject = {};
  for (const [key, value] of Object.entries(to)) {
    const before = Object.hasOwn(from, key) ? from[key] : undefined;
    if (jsonEqual(before, value)) continue;
    if (isJsonObject(before) && isJsonObject(value)) {
      const nested = createMergePatch(before, value);
      if (nested) setOwn(patch, key, nested);
    } else {
      setOwn(patch, key, structuredClone(value));
    }
  }
  for (const key of Object.keys(from)) if (!Object.hasOwn(to, key)) setOwn(patch, key, null);
  return Object.keys(patch).length > 0 ? patch : undefined;
}
