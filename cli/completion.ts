/**
 * Shell completion, as kubectl and velero offer it: the script of `lifeboat completion bash|zsh`
 * (completion-script.ts) asks `lifeboat __complete WORD…` for the candidates of the word being
 * typed (the verb table's commands and flags, a flag's values, the backups and restores of the
 * directory `--dir` names, the kubeconfig's contexts), or for the shell's own file or directory
 * completion (a first line `:files` or `:dirs`). Reads directory listings and a kubeconfig, never
 * a backup's content; writes nothing.
 */
import { readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { DEFAULT_DIR } from './common-flags.js';
import type { Completion, FlagSpec } from './flags.js';
import type { Io } from './verb-call.js';
import { NOUNS, VERBS, type Verb, verbOf } from './verbs.js';

/** The value of `--name VALUE` (or `--name=VALUE`) among the words typed so far. */
function flagValue(args: readonly string[], name: string): string | undefined {
  for (let i = args.length - 1; i >= 0; i--) {
    const arg = args[i] as string;
    if (arg === `--${name}`) return args[i + 1];
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

async function entries(dir: string): Promise<string[]> {
  return readdir(dir, { withFileTypes: true }).then(
    (found) => found.filter((e) => e.isDirectory()).map((e) => e.name),
    () => [],
  );
}

/** The kubeconfig's context names (the file --kubeconfig, $KUBECONFIG or ~/.kube/config names). */
async function contexts(args: readonly string[]): Promise<string[]> {
  const file =
    flagValue(args, 'kubeconfig') ??
    process.env.KUBECONFIG?.split(delimiter).find(Boolean) ??
    join(homedir(), '.kube', 'config');
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return [];
  const { parse } = await import('./yaml.js');
  const config = parse(text) as { contexts?: { name?: unknown }[] } | null;
  return (config?.contexts ?? []).map((c) => c.name).filter((n): n is string => typeof n === 'string');
}

async function valuesOf(completion: Completion | undefined, args: readonly string[]): Promise<string[]> {
  if (completion === undefined) return [];
  if (typeof completion !== 'string') return [...completion];
  const dir = flagValue(args, 'dir') ?? DEFAULT_DIR;
  switch (completion) {
    case 'files':
      return [':files'];
    case 'dirs':
      return [':dirs'];
    case 'backups':
      return entries(join(dir, 'backups'));
    case 'restores':
      return entries(join(dir, 'restores'));
    case 'contexts':
      return contexts(args);
  }
}

/** The flag a word names (`--dir`, `-o`), with its spec. */
function flagOf(verb: Verb, word: string): FlagSpec | undefined {
  if (word.startsWith('--')) return verb.flags[word.slice(2)];
  return Object.values(verb.flags).find((spec) => spec.short !== undefined && `-${spec.short}` === word);
}

/** Whether the words after the verb hold its operand already (a word neither flag nor value). */
function hasOperand(verb: Verb, args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('-')) return true;
    const spec = flagOf(verb, arg);
    if (spec?.type === 'string' && !arg.includes('=')) i++;
  }
  return false;
}

/** What the word being typed (the last) may become. */
export async function candidates(words: readonly string[]): Promise<string[]> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const found = verbOf(before);
  if (!found) {
    if (before.length === 0) return [...NOUNS, 'help'];
    const noun = before[0];
    return before.length === 1 ? VERBS.filter((v) => v.words[0] === noun).map((v) => v.words[1] ?? '') : [];
  }
  const { verb, args } = found;
  const previous = args.at(-1);
  const valued = previous === undefined ? undefined : flagOf(verb, previous);
  if (valued?.type === 'string') return valuesOf(valued.complete, args);
  if (current.startsWith('-')) return Object.keys(verb.flags).map((name) => `--${name}`);
  return hasOperand(verb, args) ? [] : valuesOf(verb.operand?.complete, args);
}

/** `lifeboat __complete WORD…`: the candidates starting with the last word, one a line. */
export async function complete(words: readonly string[], io: Io): Promise<number> {
  const current = words.at(-1) ?? '';
  const found = await candidates(words.length === 0 ? [''] : words);
  const shown = found[0]?.startsWith(':') ? found : found.filter((c) => c.startsWith(current));
  io.out.write(shown.length > 0 ? `${shown.join('\n')}\n` : '');
  return 0;
}
