/**
 * FinishDrill: the drill's report, from what its steps found (the item check's mismatches, the
 * readiness wait's end) and the restore's own record (its phase, its volumes and how each came
 * back): RPO, RTO, counts, every mismatch. Rewrites the InProgress record with it; the working
 * data stays until it expires, so a re-run writes the same report. The drill's event is published from the execution's end (PublishOutcome),
 * so a drill that fails before this step has one too.
 */
import * as z from 'zod';
import { readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import type { DrillRestoreEnd, DrillRun } from '../../shared/contracts/drill.js';
import {
  type DrillPhase,
  type DrillVolume,
  finishedReport,
  recoveryPointSeconds,
} from '../../shared/domain/drills/report.js';
import { drillKeys } from '../../shared/domain/storage/keys.js';
import { restoreFile } from '../../shared/domain/storage/stored-files.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { DrillItemFindings, DrillReadiness } from '../common/drill-items.js';
import { backupOfRun, writeDrillReport } from '../common/drill-records.js';
import { readJson } from '../common/stored-records.js';

export interface FinishDrillDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

export interface FinishedDrill {
  readonly name: string;
  readonly phase: DrillPhase;
  readonly rpoSeconds: number;
  readonly rtoSeconds?: number;
  readonly mismatches: number;
}

/** The parts of Velero's restore volume info a drill reports. */
const restoreVolumeInfos = z.array(
  z.looseObject({
    pvcName: z.string().optional(),
    pvcNamespace: z.string().optional(),
    restoreMethod: z.string().optional(),
    snapshotDataMoved: z.boolean().optional(),
    nativeSnapshotInfo: z.looseObject({ snapshotHandle: z.string().optional() }).optional(),
    csiSnapshotInfo: z.looseObject({ snapshotHandle: z.string().optional() }).optional(),
    snapshotDataMovementInfo: z.looseObject({ snapshotHandle: z.string().optional() }).optional(),
  }),
);

async function restoredVolumes(store: ObjectStore, restoreName: string): Promise<DrillVolume[]> {
  const infos = await readStoredJson(store, restoreFile(restoreName, 'volumeInfo'), {
    schema: restoreVolumeInfos,
    shape: 'a list of restored volumes',
  });
  return (infos ?? []).map((v) => {
    const source =
      v.nativeSnapshotInfo?.snapshotHandle ??
      v.csiSnapshotInfo?.snapshotHandle ??
      v.snapshotDataMovementInfo?.snapshotHandle;
    return {
      pvc: `${v.pvcNamespace ?? ''}/${v.pvcName ?? ''}`,
      method: `${v.restoreMethod ?? 'unknown'}${v.snapshotDataMoved ? ' (data moved)' : ''}`,
      ...(source ? { source } : {}),
    };
  });
}

export async function finishDrill(
  input: { run: DrillRun; restore: DrillRestoreEnd },
  deps: FinishDrillDeps,
): Promise<FinishedDrill> {
  const { run, restore } = input;
  const keys = drillKeys(run);
  const findings = await readJson<DrillItemFindings>(deps.store, keys.items);
  const readiness = await readJson<DrillReadiness>(deps.store, keys.readiness);
  const restoreRan =
    restore.phase !== 'Failed' && restore.phase !== 'FailedValidation' && !restore.clearFailure;
  const volumes = restoreRan ? await restoredVolumes(deps.store, run.restoreName) : [];
  const report = finishedReport({
    started: {
      name: run.name,
      cluster: run.cluster,
      backup: backupOfRun(run),
      restore: {
        name: run.restoreName,
        phase: restore.phase,
        ...(restore.failure ? { failure: failureText(restore.failure) } : {}),
      },
      namespaceMapping: run.namespaceMapping,
      startedAt: run.startedAt,
      ...(run.firedBySchedule ? { firedBySchedule: run.firedBySchedule } : {}),
    },
    rpoSeconds: recoveryPointSeconds({ backupStartedAt: run.backupStartedAt, drillStartedAt: run.startedAt }),
    items: {
      checked: findings?.checked ?? 0,
      notChecked: findings?.notChecked ?? 0,
      waitedOn: findings?.waitOn.length ?? 0,
    },
    mismatches: [...(findings?.mismatches ?? []), ...(readiness?.pending ?? [])],
    volumes,
    ...(readiness?.readyAt ? { readyAt: readiness.readyAt } : {}),
    waited: findings !== undefined,
    ...(restore.checkFailure ? { checkFailure: failureText(restore.checkFailure) } : {}),
    ...(restore.clearFailure ? { clearFailure: failureText(restore.clearFailure) } : {}),
    completedAt: deps.clock.now().toISOString(),
  });
  await writeDrillReport(deps.store, report);
  return {
    name: report.name,
    phase: report.phase,
    rpoSeconds: report.rpoSeconds,
    ...(report.rtoSeconds !== undefined ? { rtoSeconds: report.rtoSeconds } : {}),
    mismatches: report.mismatches.length,
  };
}

/**
 * Step Functions' cause of a failed nested execution is its description as JSON (with the child's
 * `Error` and `Cause`), and a Lambda's its error as JSON (`errorType`, `errorMessage`): the line.
 */
function failureText(cause: string): string {
  try {
    const parsed = JSON.parse(cause) as Record<string, unknown>;
    const error = parsed.Error ?? parsed.errorType;
    const text = parsed.Cause ?? parsed.errorMessage;
    if (typeof error === 'string' || typeof text === 'string')
      return [error, text].filter((p) => typeof p === 'string' && p).join(': ');
  } catch {
    // Not JSON: the cause as given.
  }
  return cause;
}
