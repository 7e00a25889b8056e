/**
 * `schedule create`'s flags as a schedule request: the backup template from `backup create`'s
 * flags, the cron, and Lifeboat's retention flags as the `lifeboat.io/retention` annotation.
 */
import { RETENTION_ANNOTATION } from '../../shared/contracts/schedule.js';
import { backupRequest } from '../backup/request.js';
import { type FlagValues, UsageError } from '../flags.js';
import { namespaceMapping } from '../restore/request.js';
import type { scheduleCreateFlags } from './flags.js';

type CreateFlags = FlagValues<typeof scheduleCreateFlags>;

const RETENTION_FLAGS = {
  'keep-last': 'keepLast',
  'keep-daily': 'daily',
  'keep-weekly': 'weekly',
  'keep-monthly': 'monthly',
  'keep-yearly': 'yearly',
} as const;

function retention(values: CreateFlags): string | undefined {
  const policy: Record<string, number> = {};
  for (const [flag, field] of Object.entries(RETENTION_FLAGS)) {
    const text = values[flag as keyof typeof RETENTION_FLAGS];
    if (text === undefined) continue;
    if (!/^\d+$/.test(text))
      throw new UsageError(`--${flag} must be a whole number, not ${JSON.stringify(text)}`);
    policy[field] = Number(text);
  }
  return Object.keys(policy).length > 0 ? JSON.stringify(policy) : undefined;
}

export function scheduleRequest(options: { readonly name: string; readonly values: CreateFlags }): unknown {
  const { values } = options;
  if (values.schedule === undefined)
    throw new UsageError('schedule create needs --schedule CRON, e.g. "0 3 * * *"');
  const template = backupRequest({ name: options.name, values }) as {
    cluster: string;
    backup: { metadata: { labels?: Record<string, string> }; spec: Record<string, unknown> };
  };
  const kept = retention(values);
  const drill = drillTarget(values);
  const labels = template.backup.metadata.labels;
  return {
    cluster: template.cluster,
    ...(drill ? { drill } : {}),
    schedule: {
      apiVersion: 'velero.io/v1',
      kind: 'Schedule',
      metadata: {
        name: options.name,
        ...(labels ? { labels } : {}),
        ...(kept ? { annotations: { [RETENTION_ANNOTATION]: kept } } : {}),
      },
      spec: {
        schedule: values.schedule,
        template: template.backup.spec,
        ...(values.paused ? { paused: true } : {}),
        ...(values['skip-immediately'] !== undefined ? { skipImmediately: values['skip-immediately'] } : {}),
        ...(values['use-owner-references-in-backup'] !== undefined
          ? { useOwnerReferencesInBackup: values['use-owner-references-in-backup'] }
          : {}),
      },
    },
  };
}

/** The `--drill-…` flags as the Schedule's drill target (shared/contracts/schedule-drill.ts). */
function drillTarget(values: CreateFlags): Record<string, unknown> | undefined {
  const cluster = values['drill-cluster'];
  const mappings = values['drill-namespace-mappings'];
  const timeout = values['drill-timeout'];
  if (cluster === undefined) {
    if (mappings !== undefined || timeout !== undefined)
      throw new UsageError('--drill-namespace-mappings and --drill-timeout need --drill-cluster NAME');
    return undefined;
  }
  let mapping: Record<string, string> | undefined;
  try {
    mapping = namespaceMapping(mappings);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    throw new UsageError(error.message.replace('--namespace-mappings', '--drill-namespace-mappings'));
  }
  return {
    cluster,
    ...(mapping ? { namespaceMapping: mapping } : {}),
    ...(timeout ? { readyTimeout: timeout } : {}),
  };
}
