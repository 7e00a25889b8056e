/**
 * `lifeboat backup logs NAME` and `lifeboat backup download NAME` with --local: the backup's log
 * printed, and its archive copied to a file (NAME-data.tar.gz by default, as Velero names it),
 * never over an existing file unless --force.
 */
import { gunzipSync } from 'node:zlib';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import { saveDownload } from '../download.js';
import { outputForm } from '../output.js';
import { directoryOf, localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { backupDownloadFlags, backupLogsFlags } from './flags.js';

export async function backupLogs({
  name = '',
  values,
  io,
}: VerbCall<typeof backupLogsFlags>): Promise<number> {
  const store = await localStore(values, { mustExist: true });
  const log = await store.get(backupKeys(name).logs);
  if (!log) {
    io.err.write(`lifeboat: backup "${name}" has no log in ${directoryOf(store)}\n`);
    return 1;
  }
  io.out.write(gunzipSync(log));
  return 0;
}

export async function downloadBackup({
  name = '',
  values,
  io,
}: VerbCall<typeof backupDownloadFlags>): Promise<number> {
  const form = outputForm(values.output);
  const store = await localStore(values, { mustExist: true });
  const archive = await store.getStream(backupKeys(name).contents);
  if (!archive) {
    io.err.write(`lifeboat: backup "${name}" has no archive in ${directoryOf(store)}\n`);
    return 1;
  }
  return saveDownload({ name, source: archive, values, form, io });
}
