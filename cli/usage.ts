/**
 * The usage text of `lifeboat`, made from the verb table: the overview (`lifeboat --help`), a
 * noun's verbs (`lifeboat backup --help`) and one verb with every flag (`lifeboat backup create
 * --help`), and the exit statuses scripts rely on.
 */
import type { FlagSpec } from './flags.js';
import { VERBS, type Verb } from './verbs.js';

const EXIT_STATUSES = `Exit status: 0 done; 1 the operation failed, ended PartiallyFailed, or found nothing by that
name; 2 the command line is wrong (an unknown flag, a bad value, or a file, directory, context
or kubeconfig it names that does not exist).`;

function flagLabel(name: string, spec: FlagSpec): string {
  const short = spec.short ? `-${spec.short}, ` : '';
  if (spec.type === 'boolean') return `${short}--${name}`;
  if (spec.type === 'optional-boolean') return `${short}--${name}[=false]`;
  return `${short}--${name} ${spec.value ?? 'VALUE'}`;
}

function synopsis(verb: Verb): string {
  const operand = verb.operand
    ? verb.operand.required
      ? ` ${verb.operand.name}`
      : ` [${verb.operand.name}]`
    : '';
  return `lifeboat ${verb.words.join(' ')}${operand}${Object.keys(verb.flags).length > 1 ? ' [flags]' : ''}`;
}

/** One verb: what it does and every flag with what it means. */
export function verbUsage(verb: Verb): string {
  const rows = Object.entries(verb.flags).map(([name, spec]) => [flagLabel(name, spec), spec.help] as const);
  const width = Math.min(44, Math.max(...rows.map(([label]) => label.length)) + 2);
  const lines = rows.map(([label, help]) =>
    label.length + 2 > width
      ? `  ${label}\n  ${' '.repeat(width)}${help}`
      : `  ${label.padEnd(width)}${help}`,
  );
  return `usage: ${synopsis(verb)}\n\n${verb.summary}.\n\nflags:\n${lines.join('\n')}\n\n${EXIT_STATUSES}\n`;
}

/** Every verb in a line (or only a noun's). */
export function overview(noun?: string): string {
  const verbs = VERBS.filter((v) => noun === undefined || v.words[0] === noun);
  const width = Math.max(...verbs.map((v) => synopsis(v).length)) + 2;
  const lines = verbs.map((v) => `  ${synopsis(v).padEnd(width)}${v.summary}`);
  return [
    'usage: lifeboat <command> [flags]   (flags of a command: lifeboat <command> --help)',
    '',
    ...lines,
    '',
    "The backup and restore commands talk to a deployment's API (--endpoint, $LIFEBOAT_ENDPOINT or",
    'lifeboat config set endpoint URL; signed with your AWS credentials), or with --local work here,',
    'on --dir DIR, the backup directory (default ./lifeboat-backups).',
    '',
    EXIT_STATUSES,
    '',
  ].join('\n');
}
