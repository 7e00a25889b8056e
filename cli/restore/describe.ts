/**
 * `lifeboat restore describe NAME`: the restore's record, its warnings and errors with their
 * text, and (with --details, or in JSON or YAML) what it restored. A restore whose run died is
 * recorded Failed first (abandoned-restore.ts).
 */
import { readRestore } from '../../functions/common/stored-records.js';
import { settleAbandonedRestore } from '../../functions/record-restore-failure/abandoned-restore.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { outputForm, printDocument } from '../output.js';
import { renderRestoreDescribe } from '../render/restores.js';
import { directoryOf, localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { restoreDescribeFlags } from './flags.js';

export async function describeRestore({
  name = '',
  values,
  io,
}: VerbCall<typeof restoreDescribeFlags>): Promise<number> {
  const form = outputForm(values.output);
  const store = await localStore(values, { mustExist: true });
  // A restore whose run died is recorded Failed first; one still running says so.
  const found = await settleAbandonedRestore({ name }, { store, clock: systemClock });
  if (found.state === 'running') {
    io.out.write(`Name:   ${name}\nPhase:  InProgress (run ${found.claim.runId})\n`);
    return 0;
  }
  // Each file read within its limits: one that is not what it should be fails, naming it.
  const stored = await readRestore(store, name);
  if (!stored) {
    io.err.write(`lifeboat: restore "${name}" not found in ${directoryOf(store)}\n`);
    return 1;
  }
  const { document, results, resourceList } = stored;
  if (form !== 'text') {
    await printDocument({ io, form, document: { ...document, results, resourceList } });
    return 0;
  }
  io.out.write(
    renderRestoreDescribe({ name, document, results, resourceList, details: values.details ?? false }),
  );
  return 0;
}
