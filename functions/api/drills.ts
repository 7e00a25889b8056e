/**
 * The DR drill routes: start a drill (the same checks StartDrill makes of the request's shape,
 * then the drill workflow under the drill's name, safely retried), list the drills' reports and
 * read one (InProgress while it runs, then its report with RPO, RTO and every mismatch).
 */
import { validateDrillRequest } from '../../shared/contracts/drill.js';
import type { DrillReport } from '../../shared/domain/drills/report.js';
import { AlreadyExists } from '../../shared/domain/errors.js';
import { drillKeys } from '../../shared/domain/storage/keys.js';
import { drillNames, readDrillReport } from '../common/drill-records.js';
import { clusterProblem } from './backups.js';
import type { ApiDeps } from './deps.js';
import { type ApiEvent, type ApiResult, bodyOf, conflict, invalid, json, notFound } from './http.js';

export async function createDrill(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const body = bodyOf(event);
  if (!body.ok) return body.result;
  const checked = validateDrillRequest(body.value);
  if (!checked.ok) return invalid(checked.problems);
  // Only a Schedule's firing says it fired a drill: a report must not name a Schedule that did not.
  if (checked.value.firedBySchedule !== undefined)
    return invalid([{ path: 'firedBySchedule', message: "is set only by a Schedule's drill target" }]);
  const clusterProblems = clusterProblem(checked.value.cluster, deps.clusters);
  if (clusterProblems.length > 0) return invalid(clusterProblems);
  const name = checked.value.drill.metadata.name;
  const signal = deps.signal ? { signal: deps.signal } : {};
  const input = JSON.stringify({ request: body.value });
  // A drill's name is used once: its execution is named as the drill, so a retried request finds it.
  const existing = await deps.executions.describe({ workflow: 'drill', name, ...signal });
  const taken = existing
    ? existing.input !== input
    : await deps.store.exists(drillKeys({ name }).claim, signal);
  if (taken) return conflict('AlreadyExists', `a drill named "${name}" already exists`);
  if (!existing)
    await deps.executions.start({ workflow: 'drill', name, input, ...signal }).catch((error: unknown) => {
      if (!(error instanceof AlreadyExists)) throw error;
    });
  return json(202, (await readDrillReport(deps.store, name, signal)) ?? { name, phase: 'New' });
}

export async function listDrills(deps: ApiDeps): Promise<ApiResult> {
  const signal = deps.signal ? { signal: deps.signal } : {};
  const items: DrillReport[] = [];
  for (const name of await drillNames(deps.store, signal)) {
    const report = await readDrillReport(deps.store, name, signal);
    if (report) items.push(report);
  }
  return json(200, { items });
}

export async function getDrill(name: string, deps: ApiDeps): Promise<ApiResult> {
  const signal = deps.signal ? { signal: deps.signal } : {};
  const report = await readDrillReport(deps.store, name, signal);
  if (report) return json(200, report);
  // Started but not yet reported, or refused by StartDrill before any report: its execution says.
  const execution = await deps.executions.describe({ workflow: 'drill', name, ...signal });
  if (!execution) return notFound(`drill "${name}"`);
  if (execution.status === 'RUNNING') return json(200, { name, phase: 'New' });
  return json(200, {
    name,
    phase: 'Failed',
    failureReason: execution.cause ?? execution.error ?? `its execution ended ${execution.status}`,
  });
}
