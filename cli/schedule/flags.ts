/**
 * The flags of `lifeboat schedule …` and `lifeboat gc`: Velero's `velero schedule create` flags
 * (the backup template's are `backup create`'s), and Lifeboat's retention flags. Descriptions only.
 */
import { backupCreateFlags } from '../backup/flags.js';
import { HELP, OUTPUT, WHERE } from '../common-flags.js';
import type { FlagSpec } from '../flags.js';

const count = (help: string) => ({ type: 'string' as const, value: 'N', help });

const {
  wait: _wait,
  kubeconfig: _kubeconfig,
  context: _context,
  'snapshot-region': _region,
  'repository-key-file': _key,
  'from-schedule': _fromSchedule,
  ...templateFlags
} = backupCreateFlags;

export const scheduleCreateFlags = {
  schedule: {
    type: 'string',
    value: 'CRON',
    help: 'when to back up: 5-field cron, @every DURATION, @daily…, with an optional CRON_TZ= prefix',
  },
  ...templateFlags,
  paused: { type: 'boolean', help: 'create the schedule paused' },
  'skip-immediately': {
    type: 'optional-boolean',
    help: 'skip the run that is due at once when the schedule is unpaused',
  },
  'use-owner-references-in-backup': {
    type: 'optional-boolean',
    help: 'record that the backups are owned by the schedule (Velero)',
  },
  'keep-last': count('Lifeboat: keep the N newest backups of the schedule (retention)'),
  'keep-daily': count("Lifeboat: keep the newest backup of each of the last N days (in the schedule's zone)"),
  'keep-weekly': count('Lifeboat: keep the newest backup of each of the last N weeks'),
  'keep-monthly': count('Lifeboat: keep the newest backup of each of the last N months'),
  'keep-yearly': count('Lifeboat: keep the newest backup of each of the last N years'),
  'drill-cluster': {
    type: 'string',
    value: 'NAME',
    help: "Lifeboat: at each firing, also drill the schedule's latest Completed backup into this DR cluster",
  },
  'drill-namespace-mappings': {
    type: 'string',
    value: 'a:b,c:d',
    help: "Lifeboat: the drills restore namespace a's items into namespace b (and c into d)",
  },
  'drill-timeout': {
    type: 'string',
    value: 'DURATION',
    help: 'Lifeboat: how long each drill waits for Deployments, StatefulSets and PVCs (default 10m)',
  },
} as const satisfies Record<string, FlagSpec>;

export const scheduleGetFlags = { ...WHERE, output: OUTPUT, help: HELP } as const satisfies Record<
  string,
  FlagSpec
>;

export const scheduleChangeFlags = { ...WHERE, output: OUTPUT, help: HELP } as const satisfies Record<
  string,
  FlagSpec
>;

export const scheduleDeleteFlags = {
  confirm: { type: 'boolean', help: 'delete without asking (required: nothing asks)' },
  ...WHERE,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const gcFlags = {
  'dry-run': {
    type: 'boolean',
    help: 'show what the next garbage collection would delete, and why; delete nothing',
  },
  'snapshot-region': backupCreateFlags['snapshot-region'],
  'repository-key-file': backupCreateFlags['repository-key-file'],
  ...WHERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;
