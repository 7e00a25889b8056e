/**
 * Recipe backups through the real apiserver and KWOK exec: seed 002's checkpoint recipe
 * (test/fixtures/recipes/checkpoint-recipe.yaml) from a ConfigMap, its hook commands replaced by
 * ones that append their name to a file in the pod's work directory. The order is read from the
 * execution's history (one Map iteration per step, MaxConcurrency 1); the checkpoint hook's
 * 1800 s timeout is past a Lambda's, so it runs through the hook runner (a child process here).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { ExecutionEvent } from '../../../shared/adapters/local-state-machine.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { itemsIn, readArchive } from '../support/archive.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { claimOnHostPath, namespaceWithServiceAccount, runningPod, text } from './hook-pods.js';
import { backup, backupRequest, type Outcome, tempStore } from './support.js';

const FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'recipes', 'checkpoint-recipe.yaml');

/** Seed 002's recipe, each hook's command replaced by one that appends its name to `workflow.log`. */
function checkpointRecipe(options: { failing?: string } = {}): Record<string, unknown> {
  const recipe = parse(readFileSync(FIXTURE, 'utf8')) as { hooks: { name: string; commands: unknown[] }[] };
  for (const hook of recipe.hooks) {
    const exit = hook.name === options.failing ? '; exit 5' : '';
    hook.commands = [['/bin/sh', '-c', `echo ${hook.name} >> workflow.log; echo ran ${hook.name}${exit}`]];
  }
  return recipe as unknown as Record<string, unknown>;
}

/** The steps entered, in order: `<step index>:<state>` for the recipe's task states. */
function stepsEntered(history: readonly ExecutionEvent[]): string[] {
  const tasks = new Set(['BackupRecipeGroup', 'RunRecipeHook', 'RunLongRecipeHook']);
  return history.flatMap((e) =>
    e.type === 'StateEntered' && 'state' in e && tasks.has(e.state.name)
      ? [
          `${(e.state.input as { Payload?: { step?: { index?: number } } }).Payload?.step?.index ?? '?'}:${e.state.name}`,
        ]
      : [],
  );
}

describe('a backup that follows seed 002’s checkpoint recipe', () => {
  let kc: KubeConfig;
  const namespace = uniqueName('cpd');
  const volume = `${namespace}-pv`;
  const execDir = () => join(testEnv().clusters.source.execDir, namespace, 'cpdbr-tenant');

  async function run(options: {
    recipe: Record<string, unknown>;
    name: string;
    history: ExecutionEvent[];
  }): Promise<{
    outcome: Outcome;
    store: ObjectStore;
  }> {
    const core = kc.makeApiClient(CoreV1Api);
    const configMap = uniqueName('recipe');
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: configMap }, data: { 'recipe.yaml': stringify(options.recipe) } },
    });
    const store = await tempStore();
    const outcome = await backup({
      kc,
      store,
      request: backupRequest(options.name, {
        includedNamespaces: [namespace],
        recipe: { configMap: { name: configMap, namespace } },
      }),
      extra: { onExecutionEvent: (e) => options.history.push(e) },
    });
    return { outcome, store };
  }

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    await namespaceWithServiceAccount(kc, namespace);
    const core = kc.makeApiClient(CoreV1Api);
    await claimOnHostPath(kc, {
      namespace,
      claim: 'data',
      volume,
      path: '/tmp/lifeboat-recipe',
      labels: { 'icpdsupport/empty-on-nd-backup': 'true' },
    });
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { a: '1' } },
    });
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: { name: 'scratch', labels: { 'icpdsupport/ignore-on-nd-backup': 'true' } },
        data: { b: '2' },
      },
    });
    await Promise.all([
      runningPod(kc, { namespace, name: 'cpdbr-tenant', labels: { component: 'cpdbr-tenant' } }),
      runningPod(kc, { namespace, name: 'db', labels: { app: 'db' }, claim: 'data' }),
    ]);
  });

  afterAll(async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.deleteNamespace({ name: namespace });
    await core.deletePersistentVolume({ name: volume });
  });

  describe('the whole workflow', () => {
    const name = uniqueName('recipe');
    const history: ExecutionEvent[] = [];
    let store: ObjectStore;
    let log: string[];

    beforeAll(async () => {
      const result = await run({ recipe: checkpointRecipe(), name, history });
      if (!result.outcome.ok)
        throw new Error(`backup failed: ${result.outcome.error}: ${result.outcome.cause}`);
      store = result.store;
      log = (await text(store, backupKeys(name).logs)).split('\n');
    }, 240_000);

    it('runs the steps in workflow order, one at a time, as the execution history shows', () => {
      expect(stepsEntered(history)).toEqual([
        '0:RunLongRecipeHook',
        '0:RunRecipeHook',
        '1:RunRecipeHook',
        '2:BackupRecipeGroup',
        '3:RunRecipeHook',
        '4:BackupRecipeGroup',
      ]);
      // One step at a time: each step's states, entered and exited, before the next step starts.
      const loop = new Set([
        'RecipeStep',
        'BackupRecipeGroup',
        'RunRecipeHook',
        'RunLongRecipeHook',
        'RecipeStepDone',
      ]);
      const sequence = history.flatMap((e) =>
        (e.type === 'StateEntered' || e.type === 'StateExited') && 'state' in e && loop.has(e.state.name)
          ? [`${e.type === 'StateEntered' ? '>' : '<'}${e.state.name}`]
          : [],
      );
      const step = (...tasks: string[]) => [
        '>RecipeStep',
        '<RecipeStep',
        ...tasks.flatMap((t) => [`>${t}`, `<${t}`]),
        '>RecipeStepDone',
        '<RecipeStepDone',
      ];
      expect(sequence).toEqual([
        ...step('RunLongRecipeHook', 'RunRecipeHook'),
        ...step('RunRecipeHook'),
        ...step('BackupRecipeGroup'),
        ...step('RunRecipeHook'),
        ...step('BackupRecipeGroup'),
      ]);
    });

    it('runs each hook once, in the pod its selector finds, in order', () => {
      expect(readFileSync(join(execDir(), 'workflow.log'), 'utf8')).toBe(
        'checkpoint\npre-backup\npost-backup\n',
      );
    });

    it('backs up each group’s items, leaving out what no group takes', async () => {
      const items = itemsIn(await readArchive(store, backupKeys(name).contents));
      for (const item of [
        `persistentvolumeclaims/${namespace}/data`,
        `persistentvolumes//${volume}`,
        `pods/${namespace}/db`,
        `pods/${namespace}/cpdbr-tenant`,
        `configmaps/${namespace}/settings`,
        `namespaces//${namespace}`,
      ])
        expect(items, item).toContain(item);
      expect(items).not.toContain(`configmaps/${namespace}/scratch`);
      expect(log.some((l) => l.includes('Items in no group of the recipe are not backed up'))).toBe(true);
    });

    it('logs the volume group’s items between the pre-backup and post-backup hooks, and counts the hooks', async () => {
      const at = (parts: string[]) => log.findIndex((l) => parts.every((p) => l.includes(p)));
      const preBackup = at(['msg="stdout: ran pre-backup\\n"']);
      const claim = at(['Backed up item', 'resource=persistentvolumeclaims', 'name=data']);
      const postBackup = at(['msg="stdout: ran post-backup\\n"']);
      const pod = at(['Backed up item', 'resource=pods', 'name=db']);
      expect(
        at(['msg="stdout: ran checkpoint\\n"', 'hookSource=recipe', 'hookTimeout=30m0s']),
      ).toBeGreaterThan(-1);
      expect(preBackup).toBeGreaterThan(-1);
      expect(claim).toBeGreaterThan(preBackup);
      expect(postBackup).toBeGreaterThan(claim);
      expect(pod).toBeGreaterThan(postBackup);
      const document = JSON.parse(await text(store, backupKeys(name).metadata)) as {
        status: { phase: string; hookStatus?: unknown };
      };
      expect(document.status.phase).toBe('Completed');
      expect(document.status.hookStatus).toEqual({ hooksAttempted: 3 });
    });
  });

  it('stops the workflow at a hook that fails with onError Fail, and ends PartiallyFailed', async () => {
    const name = uniqueName('stopped');
    const history: ExecutionEvent[] = [];
    const { outcome, store } = await run({
      recipe: checkpointRecipe({ failing: 'pre-backup' }),
      name,
      history,
    });
    expect(outcome).toMatchObject({ ok: true, output: { name, phase: 'PartiallyFailed' } });
    expect(stepsEntered(history)).toEqual(['0:RunLongRecipeHook', '0:RunRecipeHook', '1:RunRecipeHook']);
    const items = itemsIn(await readArchive(store, backupKeys(name).contents));
    expect([...items].filter((i) => !i.startsWith('metadata'))).toEqual([]);
    const results = JSON.parse(await text(store, backupKeys(name).results)) as {
      errors: { namespaces?: Record<string, string[]> };
    };
    expect(results.errors.namespaces?.[namespace]).toEqual([
      `pre hook pre-backup in ${namespace}/cpdbr-tenant container main failed: exit code 5`,
    ]);
  }, 240_000);

  it('ends FailedValidation naming the field path of a problem in the recipe ConfigMap', async () => {
    const recipe = checkpointRecipe();
    (recipe.workflows as { backup: unknown[] }).backup[2] = { group: 'volume' };
    const { outcome } = await run({ recipe, name: uniqueName('invalid'), history: [] });
    expect(outcome).toMatchObject({ ok: false, error: 'FailedValidation' });
    expect(outcome.ok ? '' : outcome.cause).toContain(`(ConfigMap ${namespace}/`);
    expect(outcome.ok ? '' : outcome.cause).toContain(
      'data["recipe.yaml"].workflows.backup[2].group: no group named "volume"',
    );
  });

  it('ends FailedValidation for an inline recipe with the problem’s field path', async () => {
    const recipe = checkpointRecipe();
    (recipe.hooks as { timeout?: unknown }[])[0] = { ...(recipe.hooks as object[])[0], timeout: 'soon' };
    const outcome = await backup({
      kc,
      store: await tempStore(),
      request: backupRequest(uniqueName('inline'), {
        includedNamespaces: [namespace],
        recipe: { inline: recipe },
      }),
    });
    expect(outcome).toMatchObject({ ok: false, error: 'FailedValidation' });
    expect(outcome.ok ? '' : outcome.cause).toContain('backup.spec.recipe.inline.hooks[0].timeout');
  });
});
