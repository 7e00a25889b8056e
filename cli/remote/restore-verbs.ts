/**
 * `lifeboat restore get|describe|logs|delete` against a deployment: the same documents the
 * --local verbs read, from the API, printed by the same renderers; the log fetched through the
 * download link the API gives.
 */
import { gunzipSync } from 'node:zlib';
import type { RestoreDocument, StoredRestore } from '../../functions/common/stored-records.js';
import { UsageError } from '../flags.js';
import { outputForm, printDocument } from '../output.js';
import { renderRestoreDescribe, renderRestoreTable } from '../render/restores.js';
import type {
  restoreDeleteFlags,
  restoreDescribeFlags,
  restoreGetFlags,
  restoreLogsFlags,
} from '../restore/flags.js';
import type { VerbCall } from '../verb-call.js';
import { fetchLink } from './backup-verbs.js';
import { apiClient } from './client.js';
import { allPages, refuseLocalFlags, reportFailure } from './common.js';

const restorePath = (name: string, rest = '') => `/restores/${encodeURIComponent(name)}${rest}`;

export async function remoteGetRestores({
  name,
  values,
  io,
}: VerbCall<typeof restoreGetFlags>): Promise<number> {
  refuseLocalFlags(values);
  const form = outputForm(values.output);
  const api = await apiClient(values.endpoint);
  try {
    const documents = name
      ? [await api.call<RestoreDocument>({ method: 'GET', path: restorePath(name) })]
      : (await allPages<RestoreDocument>(api, '/restores')).sort((a, b) =>
          (b.metadata?.creationTimestamp ?? '').localeCompare(a.metadata?.creationTimestamp ?? ''),
        );
    if (form === 'text') io.out.write(`${renderRestoreTable(documents)}\n`);
    else await printDocument({ io, form, document: name ? documents[0] : documents });
    return 0;
  } catch (error) {
    return reportFailure(error, io);
  }
}

export async function remoteDescribeRestore({
  name = '',
  values,
  io,
}: VerbCall<typeof restoreDescribeFlags>): Promise<number> {
  refuseLocalFlags(values);
  const form = outputForm(values.output);
  const api = await apiClient(values.endpoint);
  try {
    const stored = await api.call<StoredRestore>({ method: 'GET', path: restorePath(name, '/describe') });
    if (form !== 'text') {
      await printDocument({
        io,
        form,
        document: { ...stored.document, results: stored.results, resourceList: stored.resourceList },
      });
      return 0;
    }
    io.out.write(
      renderRestoreDescribe({
        name,
        document: stored.document,
        results: stored.results,
        resourceList: stored.resourceList,
        details: values.details ?? false,
      }),
    );
    return 0;
  } catch (error) {
    return reportFailure(error, io);
  }
}

export async function remoteRestoreLogs({
  name = '',
  values,
  io,
}: VerbCall<typeof restoreLogsFlags>): Promise<number> {
  refuseLocalFlags(values);
  const api = await apiClient(values.endpoint);
  try {
    const response = await fetchLink(api, restorePath(name, '/logs'));
    io.out.write(gunzipSync(Buffer.from(await response.arrayBuffer())));
    return 0;
  } catch (error) {
    return reportFailure(error, io);
  }
}

export async function remoteDeleteRestore({
  name = '',
  values,
  io,
}: VerbCall<typeof restoreDeleteFlags>): Promise<number> {
  refuseLocalFlags(values);
  const form = outputForm(values.output);
  if (!values.confirm)
    throw new UsageError(
      `deleting restore "${name}" removes its record and files (not what it restored): add --confirm`,
    );
  const api = await apiClient(values.endpoint);
  try {
    const deleted = await api.call<RestoreDocument>({ method: 'DELETE', path: restorePath(name) });
    if (form === 'text')
      io.out.write(`Restore "${name}": deleted (its record and files; what it restored stays).\n`);
    else await printDocument({ io, form, document: deleted });
    return 0;
  } catch (error) {
    return reportFailure(error, io);
  }
}
