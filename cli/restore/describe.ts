/**
 * `lifeboat restore describe NAME`: the restore's record, its warnings and errors with their
 * text, and (with --details, or in JSON or YAML) what it restored.
 */

import { readGzipJson } from '../../functions/common/stored-records.js';
import { restoreKeys } from '../../shared/domain/storage/keys.js';
import type { Results } from '../../shared/domain/storage/results.js';
import { outputForm, printDocument } from '../output.js';
import { type RestoreDocument, renderRestoreDescribe } from '../render/restores.js';
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
  const keys = restoreKeys(name);
  const status = await store.get(keys.status);
  if (!status) {
    io.err.write(`lifeboat: restore "${name}" not found in ${directoryOf(store)}\n`);
    return 1;
  }
  const document = JSON.parse(Buffer.from(status).toString('utf8')) as RestoreDocument;
  const results = await readGzipJson<Results>(store, keys.results);
  const resourceList = await readGzipJson<Record<string, string[]>>(store, keys.resourceList);
  if (form !== 'text') {
    await printDocument({ io, form, document: { ...document, results, resourceList } });
    return 0;
  }
  io.out.write(
    renderRestoreDescribe({ name, document, results, resourceList, details: values.details ?? false }),
  );
  return 0;
}
