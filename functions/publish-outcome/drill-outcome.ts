/**
 * A DR drill's end as an event: `Drill Completed` or `Drill Failed` (or `Drill FailedValidation`),
 * with the drill's report, less its mismatch list, as detail: names, phases, RPO and RTO, counts
 * and the failure's reason. An item's name may appear in a report; a Secret's data never does.
 */
import { StoredFileUnreadable } from '../../shared/domain/errors.js';
import type { ExecutionStatus, Workflow } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { RunMetrics } from '../../shared/runtime/metrics.js';
import { readDrillReport } from '../common/drill-records.js';

/** What of an execution's end the drill's event needs (publish-outcome.ts's EndedExecution). */
interface EndedDrill {
  readonly workflow: Workflow;
  readonly status: ExecutionStatus;
  readonly input: string;
  readonly error?: string;
  readonly cause?: string;
}

export async function drillOutcome(
  ended: EndedDrill,
  store: ObjectStore,
): Promise<{ type: string; detail: Record<string, unknown>; figures: RunMetrics & { workflow: Workflow } }> {
  const input = parsed(ended.input);
  const name = input.request?.drill?.metadata?.name ?? '';
  const report =
    ended.error === 'FailedValidation'
      ? undefined
      : await readDrillReport(store, name).catch((error: unknown) => {
          if (error instanceof StoredFileUnreadable) return undefined;
          throw error;
        });
  // A report still InProgress is of a run that ended before writing its end: that run failed.
  const phase =
    report && report.phase !== 'InProgress'
      ? report.phase
      : ended.error === 'FailedValidation'
        ? 'FailedValidation'
        : 'Failed';
  const reason =
    report?.failureReason ??
    (phase === 'Completed'
      ? undefined
      : `${ended.error ?? ended.status}${ended.cause ? `: ${ended.cause}` : ''}`);
  const { mismatches, ...summary } = report ?? { mismatches: [] };
  return {
    type: `Drill ${phase}`,
    detail: {
      drill: name,
      cluster: input.request?.cluster,
      ...summary,
      phase,
      mismatches: mismatches.length,
      ...(reason ? { failureReason: reason } : {}),
    },
    figures: {
      workflow: ended.workflow,
      phase,
      items: report?.items.checked ?? 0,
      errors: mismatches.length + (phase === 'Completed' ? 0 : 1),
      warnings: 0,
      ...(report?.rtoSeconds !== undefined ? { seconds: report.rtoSeconds } : {}),
    },
  };
}

function parsed(text: string): { request?: { cluster?: string; drill?: { metadata?: { name?: string } } } } {
  try {
    return JSON.parse(text) as ReturnType<typeof parsed>;
  } catch {
    return {};
  }
}
