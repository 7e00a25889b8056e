/**
 * Every verb of the `lifeboat` command: its words, its operand, what it does in a line, its
 * flags, and the module that carries it out, loaded only when the verb runs: `lifeboat --help`
 * loads this table and nothing else, `backup get` neither the AWS SDK, the Kubernetes client nor
 * the state machine interpreter. The usage text and shell completion come from this table, and a
 * test holds the README to it.
 */
import { backupCreateFlags, backupDeleteFlags, backupDescribeFlags, backupGetFlags } from './backup/flags.js';
import { HELP } from './common-flags.js';
import type { Completion, FlagSet } from './flags.js';
import { restoreCreateFlags, restoreDescribeFlags } from './restore/flags.js';
import type { VerbCall } from './verb-call.js';

export type { Io, VerbCall } from './verb-call.js';

export interface Operand {
  /** As the usage text shows it: NAME, bash|zsh. */
  readonly name: string;
  readonly required: boolean;
  readonly complete?: Completion;
}

export interface Verb {
  readonly words: readonly string[];
  readonly operand?: Operand;
  readonly summary: string;
  readonly flags: FlagSet;
  /** Loads the verb's module and runs it; resolves to the exit status. */
  readonly run: (call: VerbCall<FlagSet>) => Promise<number>;
}

type Runner<F extends FlagSet> = (call: VerbCall<F>) => Promise<number>;

function verb<F extends FlagSet>(spec: {
  readonly words: readonly string[];
  readonly operand?: Operand;
  readonly summary: string;
  readonly flags: F;
  readonly load: () => Promise<Runner<F>>;
}): Verb {
  const { load, ...described } = spec;
  return { ...described, run: async (call) => (await load())(call as unknown as VerbCall<F>) };
}

const NAME = { name: 'NAME', required: true } as const;

export const VERBS: readonly Verb[] = [
  verb({
    words: ['backup', 'create'],
    operand: NAME,
    summary: "back up a cluster's items (and volumes) into the backup directory",
    flags: backupCreateFlags,
    load: async () => (await import('./backup/create.js')).createBackup,
  }),
  verb({
    words: ['backup', 'get'],
    operand: { name: 'NAME', required: false, complete: 'backups' },
    summary: 'list the backups (or the one named)',
    flags: backupGetFlags,
    load: async () => (await import('./backup/get.js')).getBackups,
  }),
  verb({
    words: ['backup', 'describe'],
    operand: { ...NAME, complete: 'backups' },
    summary: 'describe a backup as velero backup describe does',
    flags: backupDescribeFlags,
    load: async () => (await import('./backup/describe.js')).describeBackup,
  }),
  verb({
    words: ['backup', 'delete'],
    operand: { ...NAME, complete: 'backups' },
    summary: 'delete a backup, its snapshots and its data in the repository',
    flags: backupDeleteFlags,
    load: async () => (await import('./backup/delete.js')).deleteBackupCommand,
  }),
  verb({
    words: ['restore', 'create'],
    operand: { name: 'NAME', required: false },
    summary: 'restore a backup into a cluster (NAME default: BACKUP-YYYYMMDDhhmmss)',
    flags: restoreCreateFlags,
    load: async () => (await import('./restore/create.js')).createRestore,
  }),
  verb({
    words: ['restore', 'describe'],
    operand: { ...NAME, complete: 'restores' },
    summary: 'describe a restore, its warnings and errors, as velero restore describe does',
    flags: restoreDescribeFlags,
    load: async () => (await import('./restore/describe.js')).describeRestore,
  }),
  verb({
    words: ['completion'],
    operand: { name: 'bash|zsh', required: true, complete: ['bash', 'zsh'] },
    summary: 'print the shell completion script: source <(lifeboat completion bash)',
    flags: { help: HELP },
    load: async () => (await import('./completion-script.js')).completionScript,
  }),
];

/** The verb a command line starts with, and the words after it. */
export function verbOf(argv: readonly string[]): { verb: Verb; args: readonly string[] } | undefined {
  const verb = VERBS.find((v) => v.words.every((word, i) => argv[i] === word));
  return verb ? { verb, args: argv.slice(verb.words.length) } : undefined;
}

/** The nouns (`backup`, `restore`, `completion`) in the order of the table. */
export const NOUNS: readonly string[] = [...new Set(VERBS.map((v) => v.words[0] ?? ''))];
