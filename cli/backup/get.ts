/** `lifeboat backup get [NAME]`: every backup of the directory (or the one named), as a table, JSON or YAML. */

import { UsageError } from '../flags.js';
import { backupsToGet } from '../local/backup-reader.js';
import { outputForm, printDocument } from '../output.js';
import { renderBackupTable } from '../render/backups.js';
import { directoryOf, localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { backupGetFlags } from './flags.js';

export async function getBackups({ name, values, io }: VerbCall<typeof backupGetFlags>): Promise<number> {
  const form = outputForm(values.output);
  // Named locations are a deployment's (its DR source): a --local run has only its directory.
  if (values.location !== undefined)
    throw new UsageError('--location names a location of a deployment: use it with --endpoint');
  const store = await localStore(values, { mustExist: true });
  // One whose velero-backup.json cannot be read: named (the command fails when it is the one asked for).
  const { documents, unreadable } = await backupsToGet(store, name);
  for (const problem of unreadable) io.err.write(`lifeboat: skipped: ${problem}\n`);
  if (name && documents.length === 0) {
    io.err.write(`lifeboat: backup "${name}" not found in ${directoryOf(store)}\n`);
    return 1;
  }
  if (form === 'text') io.out.write(`${renderBackupTable(documents)}\n`);
  else await printDocument({ io, form, document: name ? documents[0] : documents });
  return 0;
}
