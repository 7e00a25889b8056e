/**
 * `lifeboat backup get|describe|logs|download|delete` against a deployment: the same documents
 * the --local verbs read, from the API, printed by the same renderers; the log and the archive
 * fetched through the download link the API gives; a deletion followed until its
 * DeleteBackupRequest is Processed, and printed as a --local deletion is.
 */
import { gunzipSync } from 'node:zlib';
import type { StoredBackup } from '../../functions/common/stored-records.js';
import type { DeleteBackupRequest, DownloadLink } from '../../shared/contracts/api.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import type {
  backupDeleteFlags,
  backupDescribeFlags,
  backupDownloadFlags,
  backupGetFlags,
  backupLogsFlags,
} from '../backup/flags.js';
import { saveDownload } from '../download.js';
import { UsageError } from '../flags.js';
import { outputForm, printDocument } from '../output.js';
import { renderBackupDescribe, renderBackupTable } from '../render/backups.js';
import { printDeletion } from '../render/deletion.js';
import type { VerbCall } from '../verb-call.js';
import { type Api, ApiFailure, apiClient } from './client.js';
import { allPages, refuseLocalFlags, reportFailure, waitFor } from './common.js';

const backupPath = (name: string, rest = '') => `/backups/${encodeURIComponent(name)}${rest}`;

export async function remoteGetBackups({
  name,
  values,
  io,
}: VerbCall<typeof backupGetFlags>): Promise<number> {
  refuseLocalFlags(values);
  const form = outputForm(values.output);
  const api = await apiClient(values.endpoint);
  try {
    const documents = values.location
      ? await locationBackups({ api, location: values.location, name })
      : name
        ? [await api.call<BackupDocument>({ method: 'GET', path: backupPath(name) })]
        : (await allPages<BackupDocument>(api, '/backups')).sort((a, b) =>
            b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp),
          );
    if (form === 'text') io.out.write(`${renderBackupTable(documents)}\n`);
    else await printDocument({ io, form, document: name ? documents[0] : documents });
    return 0;
  } catch (error) {
    return reportFailure(error, io);
  }
}

/** The backups of a named location (`--location dr`), newest first; the one named, if any. */
async function locationBackups(options: {
  api: Api;
  location: string;
  name?: string;
}): Promise<BackupDocument[]> {
  const all = await allPages<BackupDocument>(options.api, '/backups', { location: options.location });
  const found = all.filter((b) => options.name === undefined || b.metadata.name === options.name);
  if (options.name !== undefined && found.length === 0)
    throw new ApiFailure(404, {
      code: 'NotFound',
      message: `backup "${options.name}" not found in location "${options.location}"`,
    });
  return found.sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp));
}

export async function remoteDescribeBackup({
  name = '',
  values,
  io,
}: VerbCall<typeof backupDescribeFlags>): Promise<number> {
  refuseLocalFlags(values);
  const form = outputForm(values.output);
  const api = await apiClient(values.endpoint);
  try {
    const stored = await api.call<StoredBackup>({ method: 'GET', path: backupPath(name, '/describe') });
    if (form === 'text') io.out.write(renderBackupDescribe({ ...stored, details: values.details ?? false }));
    else await printDocument({ io, form, document: stored });
    return 0;
  } catch (error) {
    return reportFailure(error, io);
  }
}

/** The bytes a download link gives. */
export async function fetchLink(api: Api, path: string): Promise<Response> {
  const link = await api.call<DownloadLink>({ method: 'GET', path });
  const response = await fetch(link.url);
  if (!response.ok || !response.body) throw new UsageError(`the download link answered ${response.status}`);
  return response;
}

export async function remoteBackupLogs({
  name = '',
  values,
  io,
}: VerbCall<typeof backupLogsFlags>): Promise<number> {
  refuseLocalFlags(values);
  const api = await apiClient(values.endpoint);
  try {
    const response = await fetchLink(api, backupPath(name, '/logs'));
    io.out.write(gunzipSync(Buffer.from(await response.arrayBuffer())));
    return 0;
  } catch (error) {
    return reportFailure(error, io);
  }
}

export async function remoteDownloadBackup({
  name = '',
  values,
  io,
}: VerbCall<typeof backupDownloadFlags>): Promise<number> {
  refuseLocalFlags(values);
  const form = outputForm(values.output);
  const api = await apiClient(values.endpoint);
  try {
    const response = await fetchLink(api, backupPath(name, '/download'));
    const source = response.body as unknown as AsyncIterable<Uint8Array>;
    return await saveDownload({ name, source, values, form, io });
  } catch (error) {
    return reportFailure(error, io);
  }
}

export async function remoteDeleteBackup({
  name = '',
  values,
  io,
}: VerbCall<typeof backupDeleteFlags>): Promise<number> {
  refuseLocalFlags(values);
  const form = outputForm(values.output);
  if (!values.confirm)
    throw new UsageError(
      `deleting backup "${name}" removes its snapshots and its data in the repository: add --confirm`,
    );
  const api = await apiClient(values.endpoint);
  try {
    await api.call<DeleteBackupRequest>({ method: 'DELETE', path: backupPath(name) });
    const request = await waitFor({
      get: () => api.call<DeleteBackupRequest>({ method: 'GET', path: backupPath(name, '/deletion') }),
      done: (r) => r.status.phase === 'Processed',
      key: (r) => r.status.phase,
    });
    const s = request.status;
    const result = {
      deleted: s.deleted ?? false,
      snapshotsDeleted: s.snapshotsDeleted ?? [],
      manifestsDeleted: s.manifestsDeleted ?? [],
      objectsDeleted: s.objectsDeleted ?? 0,
      errors: s.errors ?? [],
      ...(s.gc ? { gc: s.gc } : {}),
    };
    if (form === 'text') printDeletion({ name, result, io });
    else await printDocument({ io, form, document: request });
    return result.deleted ? 0 : 1;
  } catch (error) {
    return reportFailure(error, io);
  }
}
