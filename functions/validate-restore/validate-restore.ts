/**
 * ValidateRestore: checks the request (every problem by field path), finds the backup (by name,
 * or the latest Completed backup of a schedule), resolves the resource modifiers (inline, or a
 * ConfigMap read from the target cluster), checks the restore hooks (init containers as Velero
 * requires them, exec hooks that could run), resolves the recipe (inline, or a ConfigMap of the
 * target cluster, problems by field path), checks that a key for volumes the data mover restores
 * is a key ARN (moved-volume-key.ts), refuses a restore name already used (a dry run too), and
 * claims the name for this run. Invalid input is an outcome, not an exception.
 */

import { readBackupDocument } from '../../shared/adapters/stored-file-reader.js';
import { rejectedRequest, type ValidationResult } from '../../shared/contracts/kubernetes.js';
import {
  type RestoreRequest,
  type RestoreSpec,
  validateRestoreRequest,
} from '../../shared/contracts/restore-request.js';
import type { RestoreRun, RestoreValidation } from '../../shared/contracts/restore-run.js';
import { type FieldProblem, StoredFileUnreadable } from '../../shared/domain/errors.js';
import type { ResourceModifiers } from '../../shared/domain/restore/resource-modifiers.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import { restoreKeys, restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { claimName, nameTaken } from '../common/name-claim.js';
import { type ResolvedRecipe, resolveRecipeReference } from '../common/recipe-reference.js';
import { latestBackupOfSchedule } from '../common/schedule-backups.js';
import { settleAbandonedRestore } from '../record-restore-failure/abandoned-restore.js';
import { movedVolumeKeyProblems } from './moved-volume-key.js';
import { type ClusterReader, resolveResourceModifiers } from './resource-modifiers.js';
import { restoreHookProblems } from './restore-hooks.js';

export interface ValidateRestoreDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  /** The target cluster by the request's name, to read a resource modifier ConfigMap from. */
  readonly clusterNamed?: (name: string) => Promise<ClusterReader>;
  readonly signal?: AbortSignal;
  /** The lease the run's claim on its name carries (default: a deployed run's). */
  readonly claimLeaseSeconds?: number;
}

const rejected = rejectedRequest;

export async function validateRestore(
  input: { request: unknown; runId: string },
  deps: ValidateRestoreDeps,
): Promise<RestoreValidation> {
  const checked = validateRestoreRequest(input.request);
  if (!checked.ok) return rejected(checked.problems);
  const request = checked.value;
  const spec = request.restore.spec;

  const backupName =
    spec.backupName ??
    (spec.scheduleName
      ? (await latestBackupOfSchedule(deps.store, spec.scheduleName))?.metadata.name
      : undefined);
  if (!backupName) {
    return rejected([
      {
        path: 'restore.spec.scheduleName',
        message: `schedule "${spec.scheduleName}" has no Completed backup`,
      },
    ]);
  }
  const checks = await checkRestore({ request, backupName, deps });
  if (checks.problems.length > 0) return rejected(checks.problems);
  return startRun({ request, backupName, checks, runId: input.runId, deps });
}

/** What the checks of a request found: its problems, and what a valid run keeps of them. */
interface RestoreChecks {
  readonly problems: readonly FieldProblem[];
  readonly modifiers: ValidationResult<ResourceModifiers | undefined>;
  readonly recipe: ValidationResult<ResolvedRecipe> | undefined;
}

/** Every check past the request's own shape, each problem by field path, in the order reported. */
async function checkRestore(options: {
  request: RestoreRequest;
  backupName: string;
  deps: ValidateRestoreDeps;
}): Promise<RestoreChecks> {
  const { request, backupName, deps } = options;
  const spec = request.restore.spec;
  const problems: FieldProblem[] = [
    ...(await backupProblems({
      store: deps.store,
      backupName,
      spec,
      ...(deps.signal ? { signal: deps.signal } : {}),
    })),
  ];
  const modifiers = await resolveResourceModifiers(request, {
    ...(deps.clusterNamed ? { clusterNamed: deps.clusterNamed } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (!modifiers.ok) problems.push(...modifiers.problems);
  const recipe = spec.recipe ? await resolveRecipe({ request, ref: spec.recipe, deps }) : undefined;
  if (recipe && !recipe.ok) problems.push(...recipe.problems);
  problems.push(...restoreHookProblems(spec));
  return { problems, modifiers, recipe };
}

/** The backup must exist and be restorable; then its moved volumes' key is checked. */
async function backupProblems(options: {
  store: ObjectStore;
  backupName: string;
  spec: RestoreSpec;
  signal?: AbortSignal;
}): Promise<FieldProblem[]> {
  const { store, backupName } = options;
  const where = 'restore.spec.backupName';
  let backup: BackupDocument | undefined;
  try {
    backup = await readBackupDocument(store, backupName, options.signal ? { signal: options.signal } : {});
  } catch (error) {
    if (error instanceof StoredFileUnreadable)
      return [{ path: where, message: `backup "${backupName}" cannot be restored: ${error.message}` }];
    throw error;
  }
  if (!backup) return [{ path: where, message: `backup "${backupName}" not found` }];
  if (backup.status.phase !== 'Completed' && backup.status.phase !== 'PartiallyFailed') {
    return [
      {
        path: 'restore.spec.backupName',
        message: `backup "${backupName}" is ${backup.status.phase}, not restorable`,
      },
    ];
  }
  return movedVolumeKeyProblems(options);
}

/** The recipe the request names: inline, or a ConfigMap of the target cluster. */
function resolveRecipe(options: {
  request: RestoreRequest;
  ref: NonNullable<RestoreSpec['recipe']>;
  deps: ValidateRestoreDeps;
}): Promise<ValidationResult<ResolvedRecipe>> {
  const { request, deps } = options;
  const { clusterNamed } = deps;
  return resolveRecipeReference({
    ref: options.ref,
    path: 'restore.spec.recipe',
    workflow: 'restore',
    ...(request.restore.metadata.namespace ? { requestNamespace: request.restore.metadata.namespace } : {}),
    ...(clusterNamed ? { cluster: () => clusterNamed(request.cluster) } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
}

/** A valid request: the run, its claimed name (unless a dry run) and its working data. */
async function startRun(options: {
  request: RestoreRequest;
  backupName: string;
  checks: RestoreChecks;
  runId: string;
  deps: ValidateRestoreDeps;
}): Promise<RestoreValidation> {
  const { request, deps } = options;
  const name = request.restore.metadata.name;
  const startedAt = deps.clock.now();
  const run: RestoreRun = {
    name,
    backupName: options.backupName,
    cluster: request.cluster,
    runId: options.runId,
    startedAt: startedAt.toISOString(),
    dryRun: request.restore.spec.dryRun === true,
  };
  // A dry run writes nothing (no claim, no working data beyond the request), but is refused a
  // name a real run would be refused.
  const key = restoreKeys(name).claim;
  const taken = run.dryRun
    ? await nameTaken({ store: deps.store, key })
    : (
        await claimName({
          store: deps.store,
          key,
          runId: options.runId,
          startedAt,
          run,
          ...(deps.claimLeaseSeconds ? { leaseSeconds: deps.claimLeaseSeconds } : {}),
        })
      ).taken;
  if (taken) return rejected([await takenProblem(name, deps)]);
  await writeWorkingData({ store: deps.store, run, request, checks: options.checks });
  return { valid: true, run };
}

/** Why the name is taken; a dead run's restore is recorded Failed now (abandoned-restore.ts). */
async function takenProblem(name: string, deps: ValidateRestoreDeps): Promise<FieldProblem> {
  const path = 'restore.metadata.name';
  const found = await settleAbandonedRestore({ name }, deps);
  if (found.state === 'running')
    return {
      path,
      message: `a restore named "${name}" already exists and is in progress (run ${found.claim.runId})`,
    };
  if (found.state === 'stored' && found.abandoned)
    return {
      path,
      message: `a restore named "${name}" already exists: its run died and it is now recorded Failed (${found.abandoned})`,
    };
  return { path, message: `a restore named "${name}" already exists` };
}

/** The request, and the recipe and resource modifiers as resolved, for the steps that follow. */
async function writeWorkingData(options: {
  store: ObjectStore;
  run: RestoreRun;
  request: RestoreRequest;
  checks: RestoreChecks;
}): Promise<void> {
  const { store, run } = options;
  const { recipe, modifiers } = options.checks;
  await store.put(restoreWorkKeys(run).request, JSON.stringify(options.request), {
    contentType: 'application/json',
  });
  if (recipe?.ok) {
    await store.put(restoreWorkKeys(run).recipe, JSON.stringify(recipe.value.stored), {
      contentType: 'application/json',
    });
  }
  if (modifiers.ok && modifiers.value) {
    await store.put(restoreWorkKeys(run).resourceModifiers, JSON.stringify(modifiers.value), {
      contentType: 'application/json',
    });
  }
}
