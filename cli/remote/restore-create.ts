/**
 * `lifeboat restore create [NAME] --from-backup B` against a deployment: the same Restore request
 * as with --local (named `<backup>-YYYYMMDDhhmmss` when not named), checked the same way, sent
 * to the API; with --wait followed until it ends, then the same outcome line as a --local run
 * (the counts from the restore's resource list, each item with its outcome), and its warnings
 * and errors with their text. A dry run is --local only: the API records what it runs.
 */
import type { StoredRestore } from '../../functions/common/stored-records.js';
import { validateRestoreRequest } from '../../shared/contracts/restore-request.js';
import { UsageError } from '../flags.js';
import { outputForm, printDocument } from '../output.js';
import { renderResults } from '../render/results.js';
import { refuseProblems } from '../request-check.js';
import type { restoreCreateFlags } from '../restore/flags.js';
import { defaultRestoreName, restoreRequest } from '../restore/request.js';
import type { Io, VerbCall } from '../verb-call.js';
import { apiClient } from './client.js';
import { clusterFor, refuseLocalFlags, reportFailure, waitFor } from './common.js';

const ENDED = new Set(['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation']);

/** Created, updated, skipped and failed, counted from the resource list's `ns/name(result)` entries. */
function outcomes(list: Readonly<Record<string, readonly string[]>> | undefined): Record<string, number> {
  const counts: Record<string, number> = { created: 0, updated: 0, skipped: 0, failed: 0 };
  for (const entry of Object.values(list ?? {}).flat()) {
    const result = /\((created|updated|skipped|failed)\)$/.exec(entry)?.[1];
    if (result) counts[result] = (counts[result] ?? 0) + 1;
  }
  return counts;
}

export async function remoteCreateRestore({
  name,
  values,
  io,
}: VerbCall<typeof restoreCreateFlags>): Promise<number> {
  refuseLocalFlags(values);
  if (values['dry-run'])
    throw new UsageError('--dry-run runs with --local: a deployment records every restore it runs');
  const form = outputForm(values.output);
  const restoreName = name ?? defaultRestoreName(values, new Date());
  const api = await apiClient(values.endpoint);
  try {
    const cluster = await clusterFor(api, values.cluster);
    const request = restoreRequest({ name: restoreName, values: { ...values, cluster } });
    const checked = validateRestoreRequest(request);
    if (!checked.ok) refuseProblems(checked.problems);
    const accepted = await api.call<StoredRestore['document']>({
      method: 'POST',
      path: '/restores',
      body: request,
    });
    io.err.write(`Restore request "${restoreName}" submitted to ${api.endpoint} (cluster ${cluster}).\n`);
    if (!values.wait) {
      if (form !== 'text') await printDocument({ io, form, document: accepted });
      else io.out.write(`Run \`lifeboat restore describe ${restoreName}\` for more details.\n`);
      return 0;
    }
    const path = `/restores/${encodeURIComponent(restoreName)}`;
    const ended = await waitFor({
      get: () => api.call<StoredRestore['document']>({ method: 'GET', path }),
      done: (r) => ENDED.has(r.status.phase ?? ''),
      key: (r) => r.status.phase ?? 'New',
      onChange: (r) => io.err.write(`  ${r.status.phase ?? 'New'}\n`),
    });
    const described = await api.call<StoredRestore>({ method: 'GET', path: `${path}/describe` });
    return await printOutcome({ name: restoreName, described: { ...described, document: ended }, form, io });
  } catch (error) {
    return reportFailure(error, io);
  }
}

async function printOutcome(options: {
  name: string;
  described: StoredRestore;
  form: 'json' | 'yaml' | 'text';
  io: Io;
}): Promise<number> {
  const { name, described, form, io } = options;
  const s = described.document.status;
  if (form !== 'text') await printDocument({ io, form, document: described.document });
  if (s.phase === 'Failed' || s.phase === 'FailedValidation') {
    io.err.write(
      `Restore "${name}": ${s.phase}\n${s.failureReason ?? s.validationErrors?.join('\n') ?? ''}\n`,
    );
    return 1;
  }
  const c = outcomes(described.resourceList);
  const problems = [
    ...(s.errors ? [`${s.errors} error${s.errors > 1 ? 's' : ''}`] : []),
    ...(s.warnings ? [`${s.warnings} warning${s.warnings > 1 ? 's' : ''}`] : []),
  ];
  if (form === 'text')
    io.out.write(
      `Restore "${name}": ${s.phase} (${c.created} created, ${c.updated} updated, ${c.skipped} skipped, ${c.failed} failed${problems.length ? `; ${problems.join(', ')}` : ''}).\n`,
    );
  if ((s.warnings ?? 0) > 0 || (s.errors ?? 0) > 0)
    io.err.write(renderResults({ results: described.results, counts: s }).join('\n'));
  return s.phase === 'Completed' ? 0 : 1;
}
