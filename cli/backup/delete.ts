/**
 * `lifeboat backup delete NAME --confirm`: the backup's snapshots, its data-mover manifests and
 * its objects, then the repository's garbage collection, reporting the bytes it freed. Every
 * flag is checked before anything is deleted.
 */
import { deleteBackup } from '../../functions/delete-backup/delete-backup.js';
import { repackDeadFraction } from '../../shared/contracts/data-mover-job.js';
import { UsageError } from '../flags.js';
import { publishLocalDeletion } from '../local/events.js';
import { collectGarbage, localRepository, repositoryKeyFile } from '../local/local-data-mover.js';
import { outputForm, printDocument } from '../output.js';
import { printDeletion } from '../render/deletion.js';
import { snapshotterOf } from '../snapshots.js';
import { directoryOf, localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { backupDeleteFlags } from './flags.js';

export async function deleteBackupCommand({
  name = '',
  values,
  io,
}: VerbCall<typeof backupDeleteFlags>): Promise<number> {
  const form = outputForm(values.output);
  const fraction = repackDeadFractionFlag(values['repack-dead-fraction']);
  // Velero asks before deleting; a script says --confirm.
  if (!values.confirm)
    throw new UsageError(
      `deleting backup "${name}" removes its snapshots and its data in the repository: add --confirm`,
    );
  const store = await localStore(values, { mustExist: true });
  const repository = localRepository(store, repositoryKeyFile(values['repository-key-file']));
  const result = await deleteBackup(
    { name },
    {
      store,
      ...(await snapshotterOf(values['snapshot-region'])),
      collectGarbage: () =>
        collectGarbage({ repository, ...(fraction !== undefined ? { repackDeadFraction: fraction } : {}) }),
    },
  );
  if (result.found)
    await publishLocalDeletion({ store, name, result: { ...result }, warn: (m) => io.err.write(`${m}\n`) });
  if (!result.found) {
    io.err.write(`lifeboat: backup "${name}" not found in ${directoryOf(store)}\n`);
    return 1;
  }
  if (form === 'text') {
    printDeletion({ name, result, io });
    for (const problem of result.gc?.problems ?? [])
      io.err.write(`repository garbage collection: ${problem}\n`);
  } else await printDocument({ io, form, document: result });
  return result.deleted ? 0 : 1;
}

/** Checked before anything is deleted, by the rule the data mover's gc job applies. */
function repackDeadFractionFlag(repack: string | undefined): number | undefined {
  const fraction = repack === undefined ? undefined : repackDeadFraction.safeParse(Number(repack));
  if (fraction && !fraction.success)
    throw new UsageError(
      `--repack-dead-fraction ${fraction.error.issues[0]?.message ?? 'is not valid'}, not ${JSON.stringify(repack)}`,
    );
  return fraction?.data;
}
