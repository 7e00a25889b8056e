/**
 * Hooks written as pod annotations, with Velero's keys and parsing rules
 * (internal/hook/item_hook_handler.go):
 * - backup exec: `pre.hook.backup.velero.io/*` and `post.hook.backup.velero.io/*`; the legacy
 *   unprefixed `hook.backup.velero.io/*` counts as pre, and only when no prefixed pre hook exists;
 * - restore exec: `post.hook.restore.velero.io/*`;
 * - restore init: `init.hook.restore.velero.io/*`.
 * A hook exists only when its `command` annotation (for init hooks: `container-image`) is set.
 * Pure: reads an annotations map, never a whole object; problems become warnings, never throws.
 */
import { parseDuration } from '../kubernetes/duration.js';

export type HookErrorMode = 'Continue' | 'Fail';
export type HookPhase = 'pre' | 'post';

/** An exec hook as a user wrote it, before defaults (Velero ExecHook). */
export interface ExecHookInput {
  readonly container?: string;
  readonly command: readonly string[];
  readonly onError?: HookErrorMode;
  /** Go duration; unset, zero or negative means the default. */
  readonly timeout?: string;
}

/** A restore exec hook as a user wrote it (Velero ExecRestoreHook). */
export interface RestoreExecHookInput {
  readonly container?: string;
  readonly command: readonly string[];
  readonly onError?: HookErrorMode;
  readonly execTimeout?: string;
  readonly waitTimeout?: string;
  readonly waitForReady?: boolean;
}

/** An init container from `init.hook.restore.velero.io/*`, before its name is settled. */
export interface AnnotationInitContainer {
  /** Undefined when `container-name` is not set: a name is generated (Velero `velero-restore-init-<8 hex>`). */
  readonly name?: string;
  readonly image: string;
  /** Undefined when `command` is not set: the image's entrypoint runs. */
  readonly command?: readonly string[];
}

export interface Parsed<T> {
  /** Undefined when the pod has no such hook. */
  readonly hook?: T;
  /** Annotation values that were ignored, one sentence each, for the log. */
  readonly warnings: readonly string[];
}

/** Velero's spelling of where a hook came from, as its logs and hook tracker name it. */
export const ANNOTATION_HOOK_NAME = '<from-annotation>';

/**
 * A hook command as an annotation carries it: a JSON array of strings (`["/bin/sh","-c","…"]`),
 * or else the whole value as a single argument. Velero: a value starting with `[` that is not a
 * JSON string array is also taken whole.
 */
export function parseHookCommand(value: string): string[] {
  if (value.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (Array.isArray(parsed) && parsed.every((part) => typeof part === 'string')) return parsed;
    } catch {
      // not JSON: the value is one argument, as in Velero
    }
  }
  return [value];
}

function onErrorOf(options: {
  annotations: Readonly<Record<string, string>>;
  key: string;
  warnings: string[];
}): HookErrorMode | undefined {
  const value = options.annotations[options.key];
  if (value === undefined || value === '') return undefined;
  if (value === 'Continue' || value === 'Fail') return value;
  // Velero drops any other value to "unset"; we say so in the log.
  options.warnings.push(`annotation ${options.key}="${value}" is neither Continue nor Fail; it is ignored`);
  return undefined;
}

function durationOf(options: {
  annotations: Readonly<Record<string, string>>;
  key: string;
  warnings: string[];
}): string | undefined {
  const value = options.annotations[options.key];
  if (value === undefined || value === '') return undefined;
  if (parseDuration(value) !== undefined) return value;
  // Velero: "Unable to parse provided timeout …, using default".
  options.warnings.push(`annotation ${options.key}="${value}" is not a duration; the default is used`);
  return undefined;
}

function execHookWithPrefix(
  annotations: Readonly<Record<string, string>>,
  prefix: string,
): Parsed<ExecHookInput> {
  const command = annotations[`${prefix}hook.backup.velero.io/command`];
  if (command === undefined || command === '') return { warnings: [] };
  const warnings: string[] = [];
  const container = annotations[`${prefix}hook.backup.velero.io/container`];
  const onError = onErrorOf({ annotations, key: `${prefix}hook.backup.velero.io/on-error`, warnings });
  const timeout = durationOf({ annotations, key: `${prefix}hook.backup.velero.io/timeout`, warnings });
  return {
    hook: {
      command: parseHookCommand(command),
      ...(container ? { container } : {}),
      ...(onError ? { onError } : {}),
      ...(timeout ? { timeout } : {}),
    },
    warnings,
  };
}

/** The backup exec hook a pod's annotations define for a phase, if any. */
export function backupHookFromAnnotations(
  annotations: Readonly<Record<string, string>>,
  phase: HookPhase,
): Parsed<ExecHookInput> {
  const prefixed = execHookWithPrefix(annotations, `${phase}.`);
  // Velero: the legacy keys without a phase are a pre hook, looked at only when no pre.* hook exists.
  if (prefixed.hook || phase === 'post') return prefixed;
  return execHookWithPrefix(annotations, '');
}

/** The restore exec hook of `post.hook.restore.velero.io/*`, if any. */
export function restoreExecHookFromAnnotations(
  annotations: Readonly<Record<string, string>>,
): Parsed<RestoreExecHookInput> {
  const key = (name: string): string => `post.hook.restore.velero.io/${name}`;
  const command = annotations[key('command')];
  if (command === undefined || command === '') return { warnings: [] };
  const warnings: string[] = [];
  const container = annotations[key('container')];
  const onError = onErrorOf({ annotations, key: key('on-error'), warnings });
  const execTimeout = durationOf({ annotations, key: key('exec-timeout'), warnings });
  const waitTimeout = durationOf({ annotations, key: key('wait-timeout'), warnings });
  const readyValue = annotations[key('wait-for-ready')];
  let waitForReady: boolean | undefined;
  if (readyValue !== undefined && readyValue !== '') {
    // Go strconv.ParseBool accepts these spellings; anything else is ignored (Velero: false).
    if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(readyValue)) waitForReady = true;
    else if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(readyValue)) waitForReady = false;
    else warnings.push(`annotation ${key('wait-for-ready')}="${readyValue}" is not a boolean; it is ignored`);
  }
  return {
    hook: {
      command: parseHookCommand(command),
      ...(container ? { container } : {}),
      ...(onError ? { onError } : {}),
      ...(execTimeout ? { execTimeout } : {}),
      ...(waitTimeout ? { waitTimeout } : {}),
      ...(waitForReady !== undefined ? { waitForReady } : {}),
    },
    warnings,
  };
}

/** The init container of `init.hook.restore.velero.io/*`, if `container-image` is set. */
export function restoreInitHookFromAnnotations(
  annotations: Readonly<Record<string, string>>,
): Parsed<AnnotationInitContainer> {
  const key = (name: string): string => `init.hook.restore.velero.io/${name}`;
  const image = annotations[key('container-image')];
  if (image === undefined || image === '') return { warnings: [] };
  const name = annotations[key('container-name')];
  const command = annotations[key('command')];
  return {
    hook: {
      image,
      ...(name ? { name } : {}),
      // Velero would index an empty command; we let the image's entrypoint run instead.
      ...(command ? { command: parseHookCommand(command) } : {}),
    },
    warnings: [],
  };
}
