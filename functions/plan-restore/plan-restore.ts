/**
 * PlanRestore: reads the whole backup archive first (a hostile archive fails here, before
 * anything is created), selects the items the request asks for, prepares each as Velero does,
 * and writes them in chunks per restore phase to the working data. A restore that follows a
 * recipe gets phases per group step of its workflow, each step's items only (plan-recipe.ts). A
 * dry run writes nothing and returns what would be created, updated or skipped, in order. A
 * namespace mapping or `includeItems` entry that restores nothing is a warning (unmatched.ts).
 */
import { gzipSync } from 'node:zlib';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { type RestoreSpec, restoreRequest } from '../../shared/contracts/restore-request.js';
import type { RestorePlan, RestoreRun } from '../../shared/contracts/restore-run.js';
import type { VolumePlan } from '../../shared/contracts/restore-volumes.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { readArchiveItems } from './archive-pass.js';
import { addCrds, addNamespaces, addVolumes } from './deferred-items.js';
import { type Planning, type PlanRestoreDeps, startPlanning } from './planning.js';
import { preview } from './preview.js';
import { unmatchedWarnings } from './unmatched.js';

export type { PlanRestoreDeps } from './planning.js';

export async function planRestore(input: { run: RestoreRun }, deps: PlanRestoreDeps): Promise<RestorePlan> {
  const { run } = input;
  const spec = await readRestoreSpec({ run, store: deps.store });
  const planning = await startPlanning({ run, spec, deps });
  await readArchiveItems(planning);
  const volumePlan = await addVolumes(planning);
  addCrds(planning);
  addNamespaces(planning);
  await writeRecipeNamespaces(planning);
  await planning.chunks.flushAll();
  const warnings = await writeWarnings(planning);
  const plan = { ...planOf({ planning, volumePlan }), ...(warnings.length > 0 ? { warnings } : {}) };
  if (!run.dryRun) return plan;
  return { ...plan, preview: await dryRunPreview({ planning, plan }) };
}

/**
 * The plan's log for FinalizeRestore: Velero's line for each selected item it never restores
 * (info), and the request's parts that restore nothing (unmatched.ts: warnings, counted and
 * reported). A dry run writes nothing: its warnings are in its plan only.
 */
async function writeWarnings(planning: Planning): Promise<string[]> {
  const { run, deps } = planning;
  const time = (deps.clock ?? systemClock).now().toISOString();
  const warnings = unmatchedWarnings(planning, time);
  const notices: LogEvent[] = planning.found.notRestored.map((n) => ({
    time,
    level: 'info',
    msg: n.notice,
    fields: { restore: run.name, resource: n.groupResource, namespace: n.namespace, name: n.name },
  }));
  const events = [...notices, ...warnings];
  if (events.length > 0 && !run.dryRun)
    await deps.store.put(restoreWorkKeys(run).planLog, gzipSync(JSON.stringify(events)), {
      contentType: 'application/gzip',
    });
  return warnings.map((e) => e.msg);
}

/** The request ValidateRestore left in the working data. */
async function readRestoreSpec(options: { run: RestoreRun; store: ObjectStore }): Promise<RestoreSpec> {
  const { run } = options;
  const raw = await options.store.get(restoreWorkKeys(run).request);
  if (!raw) throw new LifeboatError(`the request of restore ${run.name} is missing from the working data`);
  return restoreRequest.parse(JSON.parse(Buffer.from(raw).toString('utf8'))).restore.spec;
}

/** A recipe's hook steps run in the namespaces this restore restores into, and only there. */
async function writeRecipeNamespaces(planning: Planning): Promise<void> {
  const { run, spec } = planning;
  if (!planning.recipe || run.dryRun) return;
  const targets = [...planning.found.namespacesNeeded.keys()]
    .map((ns) => spec.namespaceMapping?.[ns] ?? ns)
    .sort();
  await planning.deps.store.put(restoreWorkKeys(run).recipeNamespaces, JSON.stringify(targets), {
    contentType: 'application/json',
  });
}

/** The plan: each step's phases in Velero's order, numbered over the whole restore, and counts. */
function planOf(options: { planning: Planning; volumePlan: VolumePlan }): RestorePlan {
  const { run, recipe, chunks, found } = options.planning;
  const steps = recipe?.steps.map((s) => {
    const phases = s.kind === 'group' ? chunks.phasesOf(s.index) : [];
    return { ...s, phases, items: phases.reduce((n, p) => n + p.items, 0) };
  });
  return {
    dryRun: run.dryRun,
    nativeVolumes: options.volumePlan.native.length,
    provisionedVolumes: options.volumePlan.provisioned.length,
    phases: steps ? [] : chunks.phasesOf(options.planning.firstStep),
    totalItems: chunks.totalItems,
    skipped: found.skipped,
    ...(steps ? { recipe: { steps, notInRecipe: found.notInRecipe } } : {}),
  };
}

/** What a dry run would do, step by step in the plan's order, asking the cluster. */
async function dryRunPreview(options: { planning: Planning; plan: RestorePlan }): ReturnType<typeof preview> {
  const { planning, plan } = options;
  const steps = plan.recipe?.steps;
  const sequence = (
    steps ?? [{ index: planning.firstStep, kind: 'group' as const, phases: plan.phases }]
  ).map((s) => ({
    ...(steps ? { step: s.index } : {}),
    order: s.phases.map((p) => p.groupResource),
    items: planning.chunks.dryRunItemsOf(s.index),
  }));
  const entries = await preview({
    sequence,
    deps: planning.deps,
    policy: planning.spec.existingResourcePolicy ?? 'none',
  });
  // What Velero never restores, after the rest: the dry run says so, as the restore's log will.
  const notRestored = planning.found.notRestored.map((n) => ({
    phase: n.groupResource,
    item: `${n.namespace ? `${n.namespace}/` : ''}${n.name}`,
    action: 'skip' as const,
    reason: n.notice,
  }));
  return [...entries, ...notRestored];
}
