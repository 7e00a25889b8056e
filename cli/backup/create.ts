/**
 * `lifeboat backup create NAME --local`: Velero's flags turned into a Backup request, checked,
 * then run in this process against the kubeconfig's cluster (its server checked first), written
 * to --dir (volume data the data mover moves, into its repository there); progress on stderr,
 * the outcome on stdout, exit status 1 unless it Completed.
 */
import { randomUUID } from 'node:crypto';
import { readBackup } from '../../functions/common/stored-records.js';
import { readSchedule } from '../../functions/schedules/schedules.js';
import { validateBackupRequest } from '../../shared/contracts/backup-request.js';
import { reachableCluster } from '../cluster.js';
import { DEFAULT_DIR } from '../common-flags.js';
import { executionFailure } from '../execution-failure.js';
import { UsageError } from '../flags.js';
import { type ProgressEvent, runLocalBackup } from '../local/backup-runtime.js';
import { endOf, publishLocalOutcome } from '../local/events.js';
import { localRepository, repositoryKeyFile } from '../local/local-data-mover.js';
import { outputForm, printDocument } from '../output.js';
import { refuseProblems } from '../request-check.js';
import { snapshotRegion, snapshotterOf } from '../snapshots.js';
import { localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { backupCreateFlags } from './flags.js';
import { backupNowFromSchedule, fromScheduleOf } from './from-schedule.js';
import { backupRequest } from './request.js';

function progressPrinter(out: NodeJS.WriteStream): (event: ProgressEvent) => void {
  let total = 0;
  let done = 0;
  const labels: Record<string, string> = {
    ValidateBackup: 'Validating the request',
    CollectItems: 'Collecting items into ItemBlocks',
    VolumeOperations: 'Waiting for volume snapshots',
    FinalizeBackup: 'Writing the backup',
    RecordBackupFailure: 'Recording the failure',
  };
  return (event) => {
    if (event.type === 'state') out.write(`${labels[event.state] ?? event.state}…\n`);
    if (event.type === 'collected') {
      total = event.items;
      out.write(`  ${event.items} items in ${event.blocks} ItemBlocks\n`);
    }
    if (event.type === 'workers-in-process')
      out.write(`  (ItemBlock workers in this process, not in worker threads: ${event.reason})\n`);
    if (event.type === 'message-done') {
      done += event.items;
      if (out.isTTY) out.write(`\r  backed up ${done}${total ? `/${total}` : ''} items`);
      if (out.isTTY && total && done >= total) out.write('\n');
    }
  };
}

interface BackupOutcome {
  readonly phase: string;
  readonly items: number;
  readonly errors: number;
  readonly warnings: number;
}

/** The request: from the flags, or (--from-schedule) from the stored Schedule's template. */
async function requestOf({ name, values }: Pick<VerbCall<typeof backupCreateFlags>, 'name' | 'values'>) {
  const schedule = fromScheduleOf({ name, values });
  if (schedule === undefined) return backupRequest({ name: name ?? '', values });
  const stored = await readSchedule(schedule, { store: await localStore(values, { mustExist: true }) });
  if (!stored) throw new UsageError(`--from-schedule: there is no schedule "${schedule}" in the directory`);
  return backupNowFromSchedule(stored, new Date());
}

export async function createBackup({
  name,
  values,
  io,
}: VerbCall<typeof backupCreateFlags>): Promise<number> {
  const form = outputForm(values.output);
  const request = await requestOf({ name, values });
  return runBackup({ request, values, io, form });
}

async function runBackup(options: {
  readonly request: unknown;
  readonly values: VerbCall<typeof backupCreateFlags>['values'];
  readonly io: VerbCall<typeof backupCreateFlags>['io'];
  readonly form: ReturnType<typeof outputForm>;
}): Promise<number> {
  const { request, values, io, form } = options;
  const checked = validateBackupRequest(request);
  if (!checked.ok) {
    refuseProblems(checked.problems);
    return 2;
  }
  const name = checked.value.backup.metadata.name;
  const store = await localStore(values, { mustExist: false });
  const cluster = await reachableCluster(values);
  io.err.write(`Backup request "${name}" submitted (local, writing to ${store.location}).\n`);
  const region = snapshotRegion(values['snapshot-region']);
  const executionName = `local-${randomUUID()}`;
  const run = runLocalBackup(request, {
    cluster,
    store,
    executionName,
    onProgress: progressPrinter(io.err),
    ...(await snapshotterOf(values['snapshot-region'])),
    dataMover: {
      repository: localRepository(store, repositoryKeyFile(values['repository-key-file'])),
      ...(region ? { region } : {}),
    },
  });
  const ended = await run.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  await publishLocalOutcome({
    store,
    execution: {
      workflow: 'backup',
      name: executionName,
      input: JSON.stringify({ request }),
      ...endOf(ended),
    },
    warn: (m) => io.err.write(`${m}\n`),
  });
  if (!ended.ok) return executionFailure({ what: `Backup "${name}"`, io })(ended.error);
  const result = ended.value as unknown as BackupOutcome;
  if (form !== 'text') {
    await printDocument({ io, form, document: (await readBackup(store, name))?.document ?? result });
    return result.phase === 'Completed' ? 0 : 1;
  }
  io.out.write(
    `Backup "${name}": ${result.phase} (${result.items} items, ${result.errors} errors, ${result.warnings} warnings).\n` +
      `Run \`lifeboat backup describe ${name} --local --dir ${values.dir ?? DEFAULT_DIR}\` for details.\n`,
  );
  return result.phase === 'Completed' ? 0 : 1;
}
