/** `lifeboat backup describe NAME [--details]`: as `velero backup describe` prints it, or as JSON or YAML. */
import { readBackup } from '../local/backup-reader.js';
import { outputForm, printDocument } from '../output.js';
import { renderBackupDescribe } from '../render/backups.js';
import { directoryOf, localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { backupDescribeFlags } from './flags.js';

export async function describeBackup({
  name = '',
  values,
  io,
}: VerbCall<typeof backupDescribeFlags>): Promise<number> {
  const form = outputForm(values.output);
  const store = await localStore(values, { mustExist: true });
  const stored = await readBackup(store, name);
  if (!stored) {
    io.err.write(`lifeboat: backup "${name}" not found in ${directoryOf(store)}\n`);
    return 1;
  }
  if (form === 'text') io.out.write(renderBackupDescribe({ ...stored, details: values.details ?? false }));
  else await printDocument({ io, form, document: stored });
  return 0;
}
