/**
 * Velero's restore resource modifiers (internal/resourcemodifiers), applied to one prepared
 * object: every rule whose conditions hold for the object as it was before any rule ran
 * (Velero keeps a copy of the original for matching) patches the object in rule order, with
 * JSON patches (RFC 6902; a failed `test` leaves the object unchanged, without error), JSON
 * merge patches (RFC 7386) or strategic merge patches. Conditions: `groupResource` (a glob with
 * `.` as separator), `resourceNameRegex`, `namespaces` (the namespace in the backup, before any
 * mapping; not checked for cluster-scoped objects), `labelSelector` and `matches` (JSON pointer
 * equality tests). A rule that fails is reported and the object stays as the rules before it
 * left it: as in Velero, the item is still restored and the restore counts an error.
 * Pure; never puts object contents into a problem message (objects may be Secrets).
 */
import type { Operation } from 'fast-json-patch';
import jsonPatch from 'fast-json-patch';
import { compileGlob } from '../kubernetes/glob.js';
import { shouldInclude } from '../kubernetes/includes-excludes.js';
import { type LabelSelector, selectorMatches } from '../kubernetes/label-selector.js';
import { applyMergePatch, isJsonObject, type JsonObject } from '../kubernetes/merge-patch.js';
import { applyStrategicMergePatch } from '../kubernetes/strategic-merge-patch.js';

export interface JsonPatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

export interface ResourceModifierConditions {
  readonly groupResource: string;
  readonly resourceNameRegex?: string;
  readonly namespaces?: readonly string[];
  readonly labelSelector?: LabelSelector;
  readonly matches?: readonly { readonly path: string; readonly value?: unknown }[];
}

/** A rule's patches; Velero applies one kind per rule. */
export type ModifierPatch =
  | { readonly kind: 'json'; readonly operations: readonly JsonPatchOperation[] }
  | { readonly kind: 'merge'; readonly patches: readonly JsonObject[] }
  | { readonly kind: 'strategic'; readonly patches: readonly JsonObject[] };

export interface ResourceModifierRule {
  readonly conditions: ResourceModifierConditions;
  readonly patch: ModifierPatch;
}

/** A validated rule set (version v1), values already parsed. */
export interface ResourceModifiers {
  readonly rules: readonly ResourceModifierRule[];
}

const globCache = new Map<string, RegExp | undefined>();

/**
 * A `groupResource` glob as gobwas/glob compiles it with `.` as separator: `*` and `?` stop at
 * a dot, `**` crosses dots, `[a-z]`/`[!a]` classes, `{a,b}` alternatives, `\` escapes.
 * Undefined when the pattern does not compile (an unclosed `[` or `{`).
 */
export function groupResourceGlob(pattern: string): RegExp | undefined {
  if (globCache.has(pattern)) return globCache.get(pattern);
  const compiled = compileGlob(pattern, { separator: '.', strict: true });
  globCache.set(pattern, compiled);
  return compiled;
}

const regexCache = new Map<string, RegExp | undefined>();

/**
 * A Go (RE2) regular expression as a JavaScript one, unanchored as Go's MatchString; a leading
 * `(?i)`, `(?s)` or `(?m)` flag group becomes a flag. Undefined when it does not compile.
 */
export function nameRegex(source: string): RegExp | undefined {
  if (regexCache.has(source)) return regexCache.get(source);
  const flagGroup = /^\(\?([ims]+)\)/.exec(source);
  let compiled: RegExp | undefined;
  try {
    compiled = flagGroup ? new RegExp(source.slice(flagGroup[0].length), flagGroup[1]) : new RegExp(source);
  } catch {
    compiled = undefined;
  }
  regexCache.set(source, compiled);
  return compiled;
}

/**
 * A JSON patch `value` as Velero turns its string into JSON (JSONPatch.ToString): "" stays an
 * empty string; `"…"` in quotes is that string; null, true and false (any case) and numbers are
 * themselves; text starting with `{` or `[` must be JSON; anything else is a string.
 */
export function jsonPatchValue(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (text === '') return { ok: true, value: '' };
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch {
      return { ok: true, value: text.slice(1, -1) };
    }
  }
  if (text === 'null') return { ok: true, value: null };
  if (/^(true|false)$/i.test(text)) return { ok: true, value: text.toLowerCase() === 'true' };
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch {
      return { ok: false, message: 'starts with { or [ but is not valid JSON' };
    }
  }
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return { ok: true, value: Number(text) };
  return { ok: true, value: text };
}

/** A JSON patch that failed, said in words that never quote the document. */
class JsonPatchFailed extends Error {
  readonly testFailed: boolean;

  constructor(options: { error: unknown; operations: readonly Operation[] }) {
    const { error } = options;
    let message = 'the JSON patch failed';
    let testFailed = false;
    if (error instanceof jsonPatch.JsonPatchError) {
      const name = String(error.name);
      testFailed = name === 'TEST_OPERATION_FAILED';
      // The library's own message embeds the whole document; its index is not always set.
      const op = error.operation;
      const index = op ? options.operations.indexOf(op as Operation) : -1;
      const at = op ? `operation ${index >= 0 ? index : '?'} (${op.op} ${op.path})` : 'the patch';
      message = `${at}: ${name.toLowerCase().replaceAll('_', ' ')}`;
    }
    super(message);
    this.name = 'JsonPatchFailed';
    this.testFailed = testFailed;
  }
}

function applyJsonPatch(object: JsonObject, operations: readonly JsonPatchOperation[]): JsonObject {
  const ops = structuredClone(operations) as Operation[];
  try {
    return jsonPatch.applyPatch(structuredClone(object), ops, true, true).newDocument;
  } catch (error) {
    throw new JsonPatchFailed({ error, operations: ops });
  }
}

/** Whether every `matches` test holds; a missing path is no match (Velero: ErrMissing). */
function matchesHold(object: JsonObject, matches: ResourceModifierConditions['matches']): boolean {
  if (!matches || matches.length === 0) return true;
  try {
    applyJsonPatch(
      object,
      matches.map((m) => ({ op: 'test', path: m.path, value: m.value })),
    );
    return true;
  } catch {
    return false;
  }
}

/** Whether a rule's conditions hold for the object (the object before any rule patched it). */
export function conditionsHold(options: {
  conditions: ResourceModifierConditions;
  object: JsonObject;
  groupResource: string;
}): boolean {
  const { conditions, object } = options;
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  if (namespace && !shouldInclude({ includes: conditions.namespaces ?? [], excludes: [] }, namespace))
    return false;
  if (!groupResourceGlob(conditions.groupResource)?.test(options.groupResource)) return false;
  if (conditions.resourceNameRegex !== undefined && conditions.resourceNameRegex !== '') {
    if (!nameRegex(conditions.resourceNameRegex)?.test(String(metadata.name ?? ''))) return false;
  }
  if (conditions.labelSelector) {
    const labels = (isJsonObject(metadata.labels) ? metadata.labels : {}) as Record<string, string>;
    if (!selectorMatches(conditions.labelSelector, labels)) return false;
  }
  return matchesHold(object, conditions.matches);
}

function applyModifierPatch(object: JsonObject, patch: ModifierPatch): JsonObject {
  switch (patch.kind) {
    case 'json':
      return applyJsonPatch(object, patch.operations);
    case 'merge': {
      let out: unknown = object;
      for (const p of patch.patches) out = applyMergePatch(out, p);
      if (!isJsonObject(out)) throw new Error('the merge patch did not leave an object');
      return out;
    }
    case 'strategic': {
      let out = object;
      for (const p of patch.patches) out = applyStrategicMergePatch(out, p);
      return out;
    }
  }
}

/** The object after every matching rule, and one problem per rule that failed. */
export function applyResourceModifiers(options: {
  modifiers: ResourceModifiers;
  object: JsonObject;
  groupResource: string;
}): { object: JsonObject; problems: string[] } {
  const original = options.object;
  let current = original;
  const problems: string[] = [];
  for (const [index, rule] of options.modifiers.rules.entries()) {
    if (
      !conditionsHold({ conditions: rule.conditions, object: original, groupResource: options.groupResource })
    )
      continue;
    try {
      current = applyModifierPatch(current, rule.patch);
    } catch (error) {
      // Velero: a failed `test` operation skips the rule's patch and is not an error.
      if (error instanceof JsonPatchFailed && error.testFailed) continue;
      // Messages are our own (JsonPatchFailed, LifeboatError): none quotes the object.
      const message = error instanceof Error ? error.message : 'the patch failed';
      problems.push(`resource modifier rule ${index}: ${message}`);
    }
  }
  return { object: current, problems };
}
