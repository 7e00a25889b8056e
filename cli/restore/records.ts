/**
 * `lifeboat restore get|logs|delete` with --local: the restores recorded in the directory as a
 * table (or JSON or YAML), a restore's log, and deleting a restore's record and files (never what
 * it restored), by the same code the API deletes with.
 */
import { gunzipSync } from 'node:zlib';
import { deleteRestore } from '../../functions/api/restores.js';
import { listRestores, type RestoreDocument } from '../../functions/common/stored-records.js';
import { restoreKeys } from '../../shared/domain/storage/keys.js';
import type { Executions } from '../../shared/ports/executions.js';
import { UsageError } from '../flags.js';
import { outputForm, printDocument } from '../output.js';
import { renderRestoreTable } from '../render/restores.js';
import { directoryOf, localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { restoreDeleteFlags, restoreGetFlags, restoreLogsFlags } from './flags.js';

export async function getRestores({ name, values, io }: VerbCall<typeof restoreGetFlags>): Promise<number> {
  const form = outputForm(values.output);
  const store = await localStore(values, { mustExist: true });
  const documents = (await listRestores(store)).filter((d) => !name || d.metadata?.name === name);
  if (name && documents.length === 0) {
    io.err.write(`lifeboat: restore "${name}" not found in ${directoryOf(store)}\n`);
    return 1;
  }
  if (form === 'text') io.out.write(`${renderRestoreTable(documents)}\n`);
  else await printDocument({ io, form, document: name ? documents[0] : documents });
  return 0;
}

export async function restoreLogs({
  name = '',
  values,
  io,
}: VerbCall<typeof restoreLogsFlags>): Promise<number> {
  const store = await localStore(values, { mustExist: true });
  const log = await store.get(restoreKeys(name).logs);
  if (!log) {
    io.err.write(`lifeboat: restore "${name}" has no log in ${directoryOf(store)}\n`);
    return 1;
  }
  io.out.write(gunzipSync(log));
  return 0;
}

/** No execution runs under `--local` but the command's own. */
const NO_EXECUTIONS: Executions = {
  start: async () => {
    throw new Error('no executions are started by restore delete');
  },
  describe: async () => undefined,
};

export async function deleteRestoreCommand({
  name = '',
  values,
  io,
}: VerbCall<typeof restoreDeleteFlags>): Promise<number> {
  const form = outputForm(values.output);
  if (!values.confirm)
    throw new UsageError(
      `deleting restore "${name}" removes its record and files (not what it restored): add --confirm`,
    );
  const store = await localStore(values, { mustExist: true });
  const result = await deleteRestore(name, {
    store,
    executions: NO_EXECUTIONS,
    links: { link: async () => '' },
    clusters: [],
  });
  const body = JSON.parse(result.body) as RestoreDocument & { message?: string };
  if (result.statusCode >= 400) {
    io.err.write(`lifeboat: ${body.message ?? `restore "${name}" could not be deleted`}\n`);
    return 1;
  }
  if (form === 'text')
    io.out.write(`Restore "${name}": deleted (its record and files; what it restored stays).\n`);
  else await printDocument({ io, form, document: body });
  return 0;
}
