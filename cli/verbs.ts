/**
 * Every verb of the `lifeboat` command: its words, its operand, what it does in a line, its
 * flags, and the module that carries it out, loaded only when the verb runs: `lifeboat --help`
 * loads this table and nothing else, `backup get` neither the AWS SDK, the Kubernetes client nor
 * the state machine interpreter. The usage text and shell completion come from this table, and a
 * test holds the README to it.
 */
import {
  backupCreateFlags,
  backupDeleteFlags,
  backupDescribeFlags,
  backupDownloadFlags,
  backupGetFlags,
  backupLogsFlags,
} from './backup/flags.js';
import { HELP } from './common-flags.js';
import { configGetFlags, configSetFlags } from './config-flags.js';
import { drDescribeFlags, drDrillFlags, drGetFlags } from './dr/flags.js';
import { eventsFlags } from './events-flags.js';
import type { Completion, FlagSet } from './flags.js';
import {
  restoreCreateFlags,
  restoreDeleteFlags,
  restoreDescribeFlags,
  restoreGetFlags,
  restoreLogsFlags,
} from './restore/flags.js';
import {
  gcFlags,
  scheduleChangeFlags,
  scheduleCreateFlags,
  scheduleDeleteFlags,
  scheduleGetFlags,
} from './schedule/flags.js';
import { serverFlags } from './server/flags.js';
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

/**
 * A verb: `load` carries it out with --local (or always, for a verb with no `remote`), `remote`
 * against a deployment's API.
 */
function verb<F extends FlagSet>(spec: {
  readonly words: readonly string[];
  readonly operand?: Operand;
  readonly summary: string;
  readonly flags: F;
  readonly load: () => Promise<Runner<F>>;
  readonly remote?: () => Promise<Runner<F>>;
}): Verb {
  const { load, remote, ...described } = spec;
  return {
    ...described,
    run: async (call) => {
      const local = (call.values as { local?: boolean }).local === true;
      return (await (remote && !local ? remote : load)())(call as unknown as VerbCall<F>);
    },
  };
}

const NAME = { name: 'NAME', required: true } as const;

export const VERBS: readonly Verb[] = [
  verb({
    words: ['backup', 'create'],
    operand: { name: 'NAME', required: false },
    summary: "back up a cluster's items (and volumes) into the backup directory (or now from a schedule)",
    flags: backupCreateFlags,
    load: async () => (await import('./backup/create.js')).createBackup,
    remote: async () => (await import('./remote/backup-create.js')).remoteCreateBackup,
  }),
  verb({
    words: ['backup', 'get'],
    operand: { name: 'NAME', required: false, complete: 'backups' },
    summary: 'list the backups (or the one named)',
    flags: backupGetFlags,
    load: async () => (await import('./backup/get.js')).getBackups,
    remote: async () => (await import('./remote/backup-verbs.js')).remoteGetBackups,
  }),
  verb({
    words: ['backup', 'describe'],
    operand: { ...NAME, complete: 'backups' },
    summary: 'describe a backup as velero backup describe does',
    flags: backupDescribeFlags,
    load: async () => (await import('./backup/describe.js')).describeBackup,
    remote: async () => (await import('./remote/backup-verbs.js')).remoteDescribeBackup,
  }),
  verb({
    words: ['backup', 'logs'],
    operand: { ...NAME, complete: 'backups' },
    summary: "print a backup's log",
    flags: backupLogsFlags,
    load: async () => (await import('./backup/files.js')).backupLogs,
    remote: async () => (await import('./remote/backup-verbs.js')).remoteBackupLogs,
  }),
  verb({
    words: ['backup', 'download'],
    operand: { ...NAME, complete: 'backups' },
    summary: "download a backup's archive (its resources, as Velero writes them)",
    flags: backupDownloadFlags,
    load: async () => (await import('./backup/files.js')).downloadBackup,
    remote: async () => (await import('./remote/backup-verbs.js')).remoteDownloadBackup,
  }),
  verb({
    words: ['backup', 'delete'],
    operand: { ...NAME, complete: 'backups' },
    summary: 'delete a backup, its snapshots and its data in the repository',
    flags: backupDeleteFlags,
    load: async () => (await import('./backup/delete.js')).deleteBackupCommand,
    remote: async () => (await import('./remote/backup-verbs.js')).remoteDeleteBackup,
  }),
  verb({
    words: ['restore', 'create'],
    operand: { name: 'NAME', required: false },
    summary: 'restore a backup into a cluster (NAME default: BACKUP-YYYYMMDDhhmmss)',
    flags: restoreCreateFlags,
    load: async () => (await import('./restore/create.js')).createRestore,
    remote: async () => (await import('./remote/restore-create.js')).remoteCreateRestore,
  }),
  verb({
    words: ['restore', 'get'],
    operand: { name: 'NAME', required: false, complete: 'restores' },
    summary: 'list the restores (or the one named)',
    flags: restoreGetFlags,
    load: async () => (await import('./restore/records.js')).getRestores,
    remote: async () => (await import('./remote/restore-verbs.js')).remoteGetRestores,
  }),
  verb({
    words: ['restore', 'describe'],
    operand: { ...NAME, complete: 'restores' },
    summary: 'describe a restore, its warnings and errors, as velero restore describe does',
    flags: restoreDescribeFlags,
    load: async () => (await import('./restore/describe.js')).describeRestore,
    remote: async () => (await import('./remote/restore-verbs.js')).remoteDescribeRestore,
  }),
  verb({
    words: ['restore', 'logs'],
    operand: { ...NAME, complete: 'restores' },
    summary: "print a restore's log",
    flags: restoreLogsFlags,
    load: async () => (await import('./restore/records.js')).restoreLogs,
    remote: async () => (await import('./remote/restore-verbs.js')).remoteRestoreLogs,
  }),
  verb({
    words: ['restore', 'delete'],
    operand: { ...NAME, complete: 'restores' },
    summary: 'delete the record of a restore and its files (not what it restored)',
    flags: restoreDeleteFlags,
    load: async () => (await import('./restore/records.js')).deleteRestoreCommand,
    remote: async () => (await import('./remote/restore-verbs.js')).remoteDeleteRestore,
  }),
  verb({
    words: ['schedule', 'create'],
    operand: NAME,
    summary: 'create a schedule: backups of the template at cron times, kept by TTL and retention',
    flags: scheduleCreateFlags,
    load: async () => (await import('./schedule/local.js')).createScheduleCommand,
    remote: async () => (await import('./remote/schedule-verbs.js')).remoteCreateSchedule,
  }),
  verb({
    words: ['schedule', 'get'],
    operand: { name: 'NAME', required: false },
    summary: 'list the schedules (or the one named)',
    flags: scheduleGetFlags,
    load: async () => (await import('./schedule/local.js')).getSchedulesCommand,
    remote: async () => (await import('./remote/schedule-verbs.js')).remoteGetSchedules,
  }),
  verb({
    words: ['schedule', 'describe'],
    operand: NAME,
    summary: 'print a schedule with its status',
    flags: scheduleGetFlags,
    load: async () => (await import('./schedule/local.js')).describeScheduleCommand,
    remote: async () => (await import('./remote/schedule-verbs.js')).remoteDescribeSchedule,
  }),
  verb({
    words: ['schedule', 'pause'],
    operand: NAME,
    summary: 'stop a schedule from firing',
    flags: scheduleChangeFlags,
    load: async () => (await import('./schedule/local.js')).pauseScheduleCommand,
    remote: async () => (await import('./remote/schedule-verbs.js')).remotePauseSchedule,
  }),
  verb({
    words: ['schedule', 'unpause'],
    operand: NAME,
    summary: 'let a paused schedule fire again',
    flags: scheduleChangeFlags,
    load: async () => (await import('./schedule/local.js')).unpauseScheduleCommand,
    remote: async () => (await import('./remote/schedule-verbs.js')).remoteUnpauseSchedule,
  }),
  verb({
    words: ['schedule', 'delete'],
    operand: NAME,
    summary: 'delete a schedule (its backups stay until they expire)',
    flags: scheduleDeleteFlags,
    load: async () => (await import('./schedule/local.js')).deleteScheduleCommand,
    remote: async () => (await import('./remote/schedule-verbs.js')).remoteDeleteSchedule,
  }),
  verb({
    words: ['gc'],
    summary: 'delete the backups that expired or that no retention keeps (--dry-run: show them)',
    flags: gcFlags,
    load: async () => (await import('./schedule/gc.js')).collectGarbageCommand,
    remote: async () => (await import('./remote/schedule-verbs.js')).remoteCollectGarbage,
  }),
  verb({
    words: ['events'],
    summary: 'show the events local runs published (a deployment publishes them to EventBridge)',
    flags: eventsFlags,
    load: async () => (await import('./events.js')).showEvents,
  }),
  verb({
    words: ['server'],
    summary: 'serve the API of a deployment on loopback, running its workflows here (needs --local)',
    flags: serverFlags,
    load: async () => (await import('./server/serve.js')).serve,
  }),
  verb({
    words: ['config', 'set', 'endpoint'],
    operand: { name: 'URL', required: true },
    summary: "set the Lifeboat API the command talks to without --local (API Gateway's stage URL)",
    flags: configSetFlags,
    load: async () => (await import('./config-verbs.js')).setEndpoint,
  }),
  verb({
    words: ['config', 'get'],
    summary: "print the command's settings and where they are kept",
    flags: configGetFlags,
    load: async () => (await import('./config-verbs.js')).getConfig,
  }),
  verb({
    words: ['completion'],
    operand: { name: 'bash|zsh', required: true, complete: ['bash', 'zsh'] },
    summary: 'print the shell completion script: source <(lifeboat completion bash)',
    flags: { help: HELP },
    load: async () => (await import('./completion-script.js')).completionScript,
  }),
  verb({
    words: ['dr', 'drill'],
    operand: { name: 'NAME', required: false },
    summary:
      'restore a backup into a DR cluster, check it and report RPO and RTO (NAME default: BACKUP-drill-YYYYMMDDhhmmss)',
    flags: drDrillFlags,
    load: async () => (await import('./dr/drill.js')).runDrill,
    remote: async () => (await import('./remote/dr-verbs.js')).remoteRunDrill,
  }),
  verb({
    words: ['dr', 'get'],
    operand: { name: 'NAME', required: false },
    summary: 'list the DR drills (or the one named) with their RPO, RTO and mismatches',
    flags: drGetFlags,
    load: async () => (await import('./dr/reports.js')).getDrills,
    remote: async () => (await import('./remote/dr-verbs.js')).remoteGetDrills,
  }),
  verb({
    words: ['dr', 'describe'],
    operand: NAME,
    summary: "print a DR drill's report: RPO, RTO, items checked, every mismatch, volumes",
    flags: drDescribeFlags,
    load: async () => (await import('./dr/reports.js')).describeDrill,
    remote: async () => (await import('./remote/dr-verbs.js')).remoteDescribeDrill,
  }),
];

/** The verb a command line starts with, and the words after it. */
export function verbOf(argv: readonly string[]): { verb: Verb; args: readonly string[] } | undefined {
  const verb = VERBS.find((v) => v.words.every((word, i) => argv[i] === word));
  return verb ? { verb, args: argv.slice(verb.words.length) } : undefined;
}

/** The nouns (`backup`, `restore`, `server`, …) in the order of the table. */
export const NOUNS: readonly string[] = [...new Set(VERBS.map((v) => v.words[0] ?? ''))];
