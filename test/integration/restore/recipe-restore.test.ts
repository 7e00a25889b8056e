/**
 * Recipe restores through the real apiserver and KWOK exec: a namespace backed up with seed 002's
 * checkpoint recipe (test/fixtures/recipes/checkpoint-recipe.yaml) is restored into other
 * namespaces (namespaceMapping) following the recipe's restore workflow — volumes → resources a
 * workload needs → pre-workload → workloads → post-workload → operator requests — with each
 * hook's command replaced by one that appends its name to a file in the exec directory of the
 * tenant pod (which the operator runs in the target namespace: no restore group restores pods).
 * The post-workload hook runs in a pod of the Deployment the step before restored, so the step
 * waits for that pod to come up. The order is read from the execution's history.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import {
  type ExecutionEvent,
  ExecutionFailed,
  type JsonValue,
} from '../../../shared/adapters/local-state-machine.js';
import { restoreKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { claimOnHostPath, namespaceWithServiceAccount, runningPod, text } from '../backup/hook-pods.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';

const FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'recipes', 'checkpoint-recipe.yaml');

type Recipe = {
  hooks: { name: string; commands: unknown[]; labelSelector?: unknown; timeout?: unknown }[];
  workflows: { restore: Record<string, string>[] };
  groups: Record<string, unknown>[];
};

/**
 * Seed 002's recipe, each hook's command replaced by one appending its name to the tenant pod's
 * `workflow.log` (the post-workload hook writes there from the Deployment's pod, next to it).
 */
function checkpointRecipe(options: { failing?: string } = {}): Recipe {
  const recipe = parse(readFileSync(FIXTURE, 'utf8')) as Recipe;
  for (const hook of recipe.hooks) {
    const exit = hook.name === options.failing ? '; exit 4' : '';
    const file = hook.name === 'post-workload' ? '../cpdbr-tenant/workflow.log' : 'workflow.log';
    hook.commands = [['/bin/sh', '-c', `echo ${hook.name} >> ${file}; echo ran ${hook.name}${exit}`]];
    // Runs in the restored workload's pod, which comes up after the workloads step; its 1h
    // timeout (the fixture's) is past a Lambda's, so the hook runner runs it.
    if (hook.name === 'post-workload') hook.labelSelector = { matchLabels: { app: 'web' } };
  }
  return recipe;
}

/** The steps entered, in order, as `<step index>:<state>`; a hook step re-entered after its wait counts once. */
function stepsEntered(history: readonly ExecutionEvent[]): string[] {
  const tasks = new Set(['RestoreRecipeGroup', 'RunRestoreRecipeHook', 'RunLongRestoreRecipeHook']);
  const entered = history.flatMap((e) =>
    e.type === 'StateEntered' && 'state' in e && tasks.has(e.state.name)
      ? [
          `${(e.state.input as { recipe?: { step?: { index?: number } } }).recipe?.step?.index ?? '?'}:${e.state.name}`,
        ]
      : [],
  );
  return entered.filter((s, i) => s !== entered[i - 1]);
}

describe('a restore that follows seed 002’s checkpoint recipe', () => {
  let kc: KubeConfig;
  let store: ObjectStore;
  const source = uniqueName('rcpd');
  const volume = `${source}-pv`;
  const backupName = uniqueName('rcpd-backup');
  const recipeMap = uniqueName('recipe');
  const tenantDir = (namespace: string) => join(testEnv().clusters.source.execDir, namespace, 'cpdbr-tenant');

  /** A target namespace with the tenant pod the operator runs there, and the recipe ConfigMap. */
  async function target(recipe: Recipe): Promise<string> {
    const namespace = uniqueName('rcpd-to');
    await namespaceWithServiceAccount(kc, namespace);
    await runningPod(kc, { namespace, name: 'cpdbr-tenant', labels: { component: 'cpdbr-tenant' } });
    await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: recipeMap }, data: { 'recipe.yaml': stringify(recipe) } },
    });
    return namespace;
  }

  async function restore(options: {
    name: string;
    namespace: string;
    recipe: Record<string, unknown>;
    history?: ExecutionEvent[];
    dryRun?: boolean;
  }): Promise<{ ok: true; output: JsonValue } | { ok: false; error: string; cause: string }> {
    try {
      const output = await runLocalRestore(
        {
          cluster: 'target',
          restore: {
            metadata: { name: options.name, namespace: options.namespace },
            spec: {
              backupName,
              namespaceMapping: { [source]: options.namespace },
              recipe: options.recipe,
              ...(options.dryRun ? { dryRun: true } : {}),
            },
          },
        },
        {
          cluster: new KubernetesCluster(kc),
          store,
          hookStep: { pollMs: 500, waitSeconds: 1 },
          ...(options.history ? { onExecutionEvent: (e) => options.history?.push(e) } : {}),
        },
      );
      return { ok: true, output };
    } catch (error) {
      if (error instanceof ExecutionFailed) return { ok: false, ...error.failure };
      throw error;
    }
  }

  const targets: string[] = [];

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    const core = kc.makeApiClient(CoreV1Api);
    await namespaceWithServiceAccount(kc, source);
    await claimOnHostPath(kc, {
      namespace: source,
      claim: 'data',
      volume,
      path: '/tmp/lifeboat-recipe-restore',
      labels: { 'icpdsupport/empty-on-nd-backup': 'true' },
    });
    await core.createNamespacedConfigMap({
      namespace: source,
      body: { metadata: { name: 'settings' }, data: { a: '1' } },
    });
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: source,
      body: {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', 'infinity'] }] },
          },
        },
      },
    });
    await runningPod(kc, { namespace: source, name: 'cpdbr-tenant', labels: { component: 'cpdbr-tenant' } });
    await core.createNamespacedConfigMap({
      namespace: source,
      body: { metadata: { name: recipeMap }, data: { 'recipe.yaml': stringify(checkpointRecipe()) } },
    });
    store = await tempStore();
    const made = await backup({
      kc,
      store,
      request: backupRequest(backupName, {
        includedNamespaces: [source],
        recipe: { configMap: { name: recipeMap, namespace: source } },
      }),
    });
    if (!made.ok) throw new Error(`backup failed: ${made.error}: ${made.cause}`);
  }, 240_000);

  afterAll(async () => {
    const core = kc.makeApiClient(CoreV1Api);
    for (const namespace of [source, ...targets]) await core.deleteNamespace({ name: namespace });
    await core.deletePersistentVolume({ name: volume });
  });

  describe('the whole workflow', () => {
    const name = uniqueName('rcpd-restore');
    const history: ExecutionEvent[] = [];
    let namespace: string;
    let output: JsonValue;
    let log: string[];

    beforeAll(async () => {
      namespace = await target(checkpointRecipe());
      targets.push(namespace);
      const result = await restore({ name, namespace, recipe: { configMap: { name: recipeMap } }, history });
      if (!result.ok) throw new Error(`restore failed: ${result.error}: ${result.cause}`);
      output = result.output;
      log = (await text(store, restoreKeys(name).logs)).split('\n');
    }, 240_000);

    it('runs the restore workflow’s steps in order, one at a time, as the execution history shows', () => {
      expect(stepsEntered(history)).toEqual([
        '0:RestoreRecipeGroup',
        '1:RestoreRecipeGroup',
        '2:RunRestoreRecipeHook',
        '3:RestoreRecipeGroup',
        // One hour is past a Lambda's time: the hook runner runs the step, then its result is read.
        '4:RunLongRestoreRecipeHook',
        '4:RunRestoreRecipeHook',
        '5:RestoreRecipeGroup',
      ]);
      // One step at a time: every state of a step is exited before the next step's RecipeStep.
      const loop = new Set([
        'RecipeStep',
        'RestoreRecipeGroup',
        'RunRestoreRecipeHook',
        'PrepareLongRecipeHook',
        'RunLongRestoreRecipeHook',
        'RecipeStepDone',
      ]);
      let open = 0;
      for (const e of history) {
        if (!('state' in e) || !loop.has(e.state.name)) continue;
        if (e.type === 'StateEntered' && e.state.name === 'RecipeStep') expect(open).toBe(0);
        if (e.type === 'StateEntered') open++;
        if (e.type === 'StateExited') open--;
      }
      // The restored pods' own hooks and the results come after the workflow.
      const last = (state: string) => history.findLastIndex((e) => 'state' in e && e.state.name === state);
      const first = (state: string) => history.findIndex((e) => 'state' in e && e.state.name === state);
      expect(first('RestoreHooks')).toBeGreaterThan(last('RecipeStepDone'));
      expect(first('FinalizeRestore')).toBeGreaterThan(first('RestoreHooks'));
    });

    it('runs each hook once, in order, the post-workload hook in the restored Deployment’s pod', () => {
      expect(readFileSync(join(tenantDir(namespace), 'workflow.log'), 'utf8')).toBe(
        'pre-workload\npost-workload\n',
      );
      // Never in a pod of a namespace the restore does not restore into: the backed-up one has
      // only the backup's hooks' lines.
      expect(readFileSync(join(tenantDir(source), 'workflow.log'), 'utf8')).toBe(
        'checkpoint\npre-backup\npost-backup\n',
      );
      const line = (parts: string[]) => log.findIndex((l) => parts.every((p) => l.includes(p)));
      expect(
        line(['msg="stdout: ran pre-workload\\n"', 'hookSource=recipe', 'name=cpdbr-tenant']),
      ).toBeGreaterThan(-1);
      const post = log.find((l) => l.includes('msg="stdout: ran post-workload\\n"'));
      expect(post).toMatch(/ name=web-[a-z0-9]+-[a-z0-9]+ /);
      // With its whole timeout: the hook runner is not bound by a Lambda's 15 minutes.
      expect(log.some((l) => l.includes('running exec hook') && l.includes('hookTimeout=1h0m0s'))).toBe(true);
      expect(log.some((l) => l.includes('runs with'))).toBe(false);
    });

    it('restores each restore group’s items, and nothing no restore group takes', async () => {
      const core = kc.makeApiClient(CoreV1Api);
      const apps = kc.makeApiClient(AppsV1Api);
      const restoredLabel = (o: { metadata?: { labels?: Record<string, string> } }) =>
        o.metadata?.labels?.['velero.io/restore-name'];
      expect(restoredLabel(await core.readNamespacedConfigMap({ namespace, name: 'settings' }))).toBe(name);
      expect(restoredLabel(await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' }))).toBe(
        name,
      );
      expect(restoredLabel(await apps.readNamespacedDeployment({ namespace, name: 'web' }))).toBe(name);
      // The tenant pod is the operator's: no restore group restores pods.
      expect(
        restoredLabel(await core.readNamespacedPod({ namespace, name: 'cpdbr-tenant' })),
      ).toBeUndefined();
      const list = JSON.parse(await text(store, restoreKeys(name).resourceList)) as Record<string, string[]>;
      expect(Object.keys(list)).not.toContain('v1/Pod');
      expect(list['v1/ConfigMap']).toEqual(expect.arrayContaining([`${namespace}/settings(created)`]));
      expect(list['apps/v1/Deployment']).toEqual([`${namespace}/web(created)`]);
      expect(output).toMatchObject({ name, phase: 'Completed', hooksAttempted: 2, hooksFailed: 0 });
    });

    it('logs the restored items in workflow order: volumes, then the resources workloads need, then workloads', () => {
      const at = (parts: string[]) => log.findIndex((l) => parts.every((p) => l.includes(p)));
      const claim = at(['resource=persistentvolumeclaims', 'name=data']);
      const settings = at(['resource=configmaps', 'name=settings']);
      const deployment = at(['resource=deployments', 'name=web']);
      expect(claim).toBeGreaterThan(-1);
      expect(settings).toBeGreaterThan(claim);
      expect(deployment).toBeGreaterThan(settings);
    });
  });

  it('shows in a dry run which step restores each item, and what no step restores', async () => {
    const namespace = uniqueName('rcpd-dry');
    const result = await restore({
      name: uniqueName('rcpd-dry'),
      namespace,
      recipe: { inline: checkpointRecipe() as unknown as Record<string, unknown> },
      dryRun: true,
    });
    if (!result.ok) throw new Error(`dry run failed: ${result.error}: ${result.cause}`);
    const plan = result.output as {
      phases: unknown[];
      recipe: { steps: { index: number; kind: string; items: number }[]; notInRecipe: number };
      preview: { phase: string; item: string; recipeStep?: number }[];
    };
    const stepOf = (phase: string, item: string) =>
      plan.preview.find((p) => p.phase === phase && p.item === item)?.recipeStep;
    expect(plan.phases).toEqual([]);
    expect(plan.recipe.steps.map((s) => `${s.index}:${s.kind}`)).toEqual([
      '0:group',
      '1:group',
      '2:hook',
      '3:group',
      '4:hook',
      '5:group',
    ]);
    expect(stepOf('namespaces', namespace)).toBe(0);
    expect(stepOf('persistentvolumeclaims', `${namespace}/data`)).toBe(0);
    expect(stepOf('configmaps', `${namespace}/settings`)).toBe(1);
    expect(stepOf('deployments.apps', `${namespace}/web`)).toBe(3);
    expect(plan.preview.filter((p) => p.phase === 'pods')).toEqual([]);
    // The pods (the tenant and the Deployment's) are backed up, and no restore group takes them.
    expect(plan.recipe.notInRecipe).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('stops the workflow at a hook that fails with onError Fail, and ends PartiallyFailed', async () => {
    const name = uniqueName('rcpd-stopped');
    const history: ExecutionEvent[] = [];
    const namespace = await target(checkpointRecipe());
    targets.push(namespace);
    const result = await restore({
      name,
      namespace,
      recipe: { inline: checkpointRecipe({ failing: 'pre-workload' }) as unknown as Record<string, unknown> },
      history,
    });
    expect(result).toMatchObject({ ok: true, output: { name, phase: 'PartiallyFailed', hooksFailed: 1 } });
    expect(stepsEntered(history)).toEqual([
      '0:RestoreRecipeGroup',
      '1:RestoreRecipeGroup',
      '2:RunRestoreRecipeHook',
    ]);
    await expect(
      kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace, name: 'web' }),
    ).rejects.toMatchObject({ code: 404 });
    const results = JSON.parse(await text(store, restoreKeys(name).results)) as {
      errors: { namespaces?: Record<string, string[]> };
    };
    expect(results.errors.namespaces?.[namespace]).toEqual([
      `hook pre-workload in container main in pod ${namespace}/cpdbr-tenant failed: command terminated with exit code 4`,
    ]);
    expect(readFileSync(join(tenantDir(namespace), 'workflow.log'), 'utf8')).toBe('pre-workload\n');
  }, 240_000);

  it('ends FailedValidation naming the field path of a problem in the recipe ConfigMap', async () => {
    const recipe = checkpointRecipe();
    recipe.workflows.restore[3] = { group: 'workloads' };
    const namespace = await target(recipe);
    targets.push(namespace);
    const result = await restore({
      name: uniqueName('rcpd-invalid'),
      namespace,
      recipe: { configMap: { name: recipeMap } },
    });
    expect(result).toMatchObject({ ok: false, error: 'FailedValidation' });
    expect(result.ok ? '' : result.cause).toContain(
      `restore.spec.recipe(ConfigMap ${namespace}/${recipeMap}).data["recipe.yaml"].workflows.restore[3].group: no group named "workloads"`,
    );
  });

  it('ends FailedValidation for an inline restore group whose backup group does not exist', async () => {
    const recipe = checkpointRecipe();
    recipe.groups[3] = { ...recipe.groups[3], backupGroup: 'cpd-instance-everything' };
    const result = await restore({
      name: uniqueName('rcpd-inline'),
      namespace: uniqueName('rcpd-none'),
      recipe: { inline: recipe as unknown as Record<string, unknown> },
    });
    expect(result).toMatchObject({ ok: false, error: 'FailedValidation' });
    expect(result.ok ? '' : result.cause).toContain(
      'restore.spec.recipe.inline.groups[3].backupGroup: no group named "cpd-instance-everything"',
    );
  });
});
