/**
 * The pods a recipe hook step runs in, as RunRestoreRecipeHook keeps them in the step's state:
 * each selected pod with the commands it runs, and, for a pod whose hook container does not
 * exist, each command recorded failed, not run. Lists no pod and runs no command here.
 */
import { gzipSync } from 'node:zlib';
import type { RecipeHook } from '../../shared/contracts/recipe.js';
import type {
  PodHooksOutcome,
  RestoreRecipeHookInput,
  RestoreRecipeHookState,
} from '../../shared/contracts/restore-run.js';
import type { HookPod } from '../../shared/domain/hooks/backup.js';
import { restoreRecipeExecHooks } from '../../shared/domain/recipes/restore-hooks.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

const gz = (value: unknown): Buffer => gzipSync(JSON.stringify(value));

/** Keeps the pods the step runs in (in the order selected), with the hooks each runs, in `state`. */
export async function recordStepPods(options: {
  readonly selected: readonly HookPod[];
  readonly hook: RecipeHook;
  readonly state: RestoreRecipeHookState;
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly run: RestoreRecipeHookInput['run'];
  readonly step: number;
  /** The step's log fields: restore, step and hook. */
  readonly fields: Readonly<Record<string, string | number>>;
  readonly signal?: AbortSignal;
}): Promise<void> {
  const { selected, hook, state } = options;
  const records: NonNullable<RestoreRecipeHookState['pods']> = [];
  state.pods = records;
  for (const pod of selected) {
    const hooks = restoreRecipeExecHooks(pod, hook);
    records.push({
      namespace: pod.namespace,
      name: pod.name,
      execHooks: hooks.invalid
        ? []
        : [
            {
              container: hooks.container,
              hooks: hooks.hooks.map((h) => ({ ...h, command: [...h.command] })),
            },
          ],
      warnings: [],
    });
    // A container that does not exist: each command fails unrun (an error, as at backup).
    if (hooks.invalid) {
      const { store, clock, run, step, signal } = options;
      await failUnrun({ pod, hooks, store, clock, run, step, ...(signal ? { signal } : {}) });
    }
  }
  state.log.push({
    time: options.clock.now().toISOString(),
    level: 'info',
    msg: 'Recipe hook step runs in pods',
    fields: { ...options.fields, pods: selected.map((p) => `${p.namespace}/${p.name}`).join(',') },
  });
}

/** Records each command of a pod whose hook container does not exist as failed, not run. */
async function failUnrun(options: {
  pod: { namespace: string; name: string };
  hooks: ReturnType<typeof restoreRecipeExecHooks>;
  store: ObjectStore;
  clock: Clock;
  run: RestoreRecipeHookInput['run'];
  step: number;
  signal?: AbortSignal;
}): Promise<void> {
  const { pod, hooks, run } = options;
  const time = options.clock.now().toISOString();
  const message = `recipe hook ${hooks.hooks[0]?.hookName ?? ''} in pod ${pod.namespace}/${pod.name} not executed: ${hooks.invalid ?? ''}`;
  const outcome: PodHooksOutcome = {
    namespace: pod.namespace,
    name: pod.name,
    runs: hooks.hooks.map((h, index) => ({
      container: hooks.container,
      index,
      hookName: h.hookName,
      source: 'recipe' as const,
      status: 'failed' as const,
      failure: { kind: 'notExecuted' as const, message },
    })),
    stopped: hooks.hooks[0]?.onError === 'Fail',
    log: [
      {
        time,
        level: 'error',
        msg: message,
        fields: { restore: run.name, resource: 'pods', namespace: pod.namespace, name: pod.name },
      },
    ],
  };
  await options.store.put(
    restoreWorkKeys(run).recipeHookPodProgress(options.step, pod.namespace, pod.name),
    gz(outcome),
    {
      contentType: 'application/gzip',
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
}
