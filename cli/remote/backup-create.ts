/**
 * `lifeboat backup create NAME` against a deployment: Velero's flags made into the same Backup
 * request as with --local, checked the same way, sent to the API (POST /backups); with --wait,
 * the backup's phase and progress followed on stderr until it ends, and the same outcome line as
 * a --local run. Exit status 1 unless it Completed (or, without --wait, was accepted).
 */

import { validateBackupRequest } from '../../shared/contracts/backup-request.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import type { backupCreateFlags } from '../backup/flags.js';
import { fromScheduleOf } from '../backup/from-schedule.js';
import { backupRequest } from '../backup/request.js';
import { outputForm, printDocument } from '../output.js';
import { refuseProblems } from '../request-check.js';
import type { Io, VerbCall } from '../verb-call.js';
import { type Api, apiClient } from './client.js';
import { clusterFor, refuseLocalFlags, reportFailure, waitFor } from './common.js';

const ENDED = new Set(['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation']);

function progressLine(backup: BackupDocument, io: Io): void {
  const p = backup.status.progress;
  io.err.write(
    `  ${backup.status.phase}${p ? `: ${p.itemsBackedUp}/${p.totalItems} items backed up` : ''}\n`,
  );
}

/** Starts the backup: POST /backups, or (--from-schedule) POST /schedules/{schedule}/backups. */
async function startBackup(options: {
  readonly api: Api;
  readonly name: string | undefined;
  readonly values: VerbCall<typeof backupCreateFlags>['values'];
  readonly io: Io;
}): Promise<BackupDocument> {
  const { api, name, values, io } = options;
  const schedule = fromScheduleOf({ name, values });
  if (schedule !== undefined) {
    const path = `/schedules/${encodeURIComponent(schedule)}/backups`;
    const accepted = await api.call<BackupDocument>({ method: 'POST', path });
    io.err.write(
      `Backup request "${accepted.metadata.name}" from schedule "${schedule}" submitted to ${api.endpoint}.\n`,
    );
    return accepted;
  }
  const cluster = await clusterFor(api, values.cluster);
  const request = backupRequest({ name: name ?? '', values: { ...values, cluster } });
  const checked = validateBackupRequest(request);
  if (!checked.ok) refuseProblems(checked.problems);
  const accepted = await api.call<BackupDocument>({ method: 'POST', path: '/backups', body: request });
  io.err.write(`Backup request "${name}" submitted to ${api.endpoint} (cluster ${cluster}).\n`);
  return accepted;
}

export async function remoteCreateBackup({
  name: operand,
  values,
  io,
}: VerbCall<typeof backupCreateFlags>): Promise<number> {
  refuseLocalFlags(values);
  const form = outputForm(values.output);
  const api = await apiClient(values.endpoint);
  try {
    const accepted = await startBackup({ api, name: operand, values, io });
    const name = accepted.metadata.name;
    if (!values.wait) {
      if (form !== 'text') await printDocument({ io, form, document: accepted });
      else
        io.out.write(
          `Run \`lifeboat backup describe ${name}\` or \`lifeboat backup logs ${name}\` for more details.\n`,
        );
      return 0;
    }
    const path = `/backups/${encodeURIComponent(name)}`;
    const ended = await waitFor({
      get: () => api.call<BackupDocument>({ method: 'GET', path }),
      done: (b) => ENDED.has(b.status.phase),
      key: (b) =>
        `${b.status.phase} ${b.status.progress?.itemsBackedUp ?? ''}/${b.status.progress?.totalItems ?? ''}`,
      onChange: (b) => progressLine(b, io),
    });
    return printOutcome({ name, backup: ended, form, io });
  } catch (error) {
    return reportFailure(error, io);
  }
}

async function printOutcome(options: {
  name: string;
  backup: BackupDocument;
  form: 'json' | 'yaml' | 'text';
  io: Io;
}): Promise<number> {
  const { name, backup, form, io } = options;
  const s = backup.status;
  if (form !== 'text') await printDocument({ io, form, document: backup });
  else if (s.phase === 'Failed' || s.phase === 'FailedValidation')
    io.err.write(
      `Backup "${name}": ${s.phase}\n${s.failureReason ?? s.validationErrors?.join('\n') ?? ''}\n`,
    );
  else
    io.out.write(
      `Backup "${name}": ${s.phase} (${s.progress?.totalItems ?? 0} items, ${s.errors ?? 0} errors, ${s.warnings ?? 0} warnings).\n` +
        `Run \`lifeboat backup describe ${name}\` for details.\n`,
    );
  return s.phase === 'Completed' ? 0 : 1;
}
