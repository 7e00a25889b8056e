/**
 * Restore semantics against the real local apiserver: resource modifiers (inline and from a
 * ConfigMap, and refused ones), restoreStatus through the status subresource, and existing
 * ServiceAccounts merged. One backup of a namespace; every restore maps it to a new namespace
 * of the same cluster.
 */
import { gunzipSync } from 'node:zlib';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { validateRestore } from '../../../functions/validate-restore/validate-restore.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { ExecutionFailed } from '../../../shared/adapters/local-state-machine.js';
import { systemClock } from '../../../shared/adapters/system-clock.js';
import { restoreKeys, restoreWorkKeys } from '../../../shared/domain/storage/keys.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

type Outcome =
  | { ok: true; output: { phase: string; created: number; updated: number; errors: number } }
  | { ok: false; error: string; cause: string };

async function restore(options: {
  kc: KubeConfig;
  store: LocalDirectoryStore;
  spec: Record<string, unknown>;
  name?: string;
  namespace?: string;
}): Promise<Outcome> {
  const metadata = {
    name: options.name ?? uniqueName('restore'),
    ...(options.namespace ? { namespace: options.namespace } : {}),
  };
  try {
    const output = await runLocalRestore(
      { cluster: 'target', restore: { metadata, spec: options.spec } },
      { cluster: new KubernetesCluster(options.kc), store: options.store },
    );
    return { ok: true, output: output as Extract<Outcome, { ok: true }>['output'] };
  } catch (error) {
    if (error instanceof ExecutionFailed) return { ok: false, ...error.failure };
    throw error;
  }
}

const MODIFIER_RULES = (sourceNamespace: string) => ({
  version: 'v1',
  resourceModifierRules: [
    {
      // The namespace of the backup, not the mapped one (Velero).
      conditions: {
        groupResource: 'deployments.apps',
        namespaces: [sourceNamespace],
        resourceNameRegex: '^web$',
      },
      patches: [{ operation: 'replace', path: '/spec/replicas', value: '1' }],
    },
    {
      conditions: { groupResource: 'configmaps', labelSelector: { matchLabels: { kind: 'settings' } } },
      mergePatches: [{ patchData: 'metadata:\n  labels:\n    restored-by: lifeboat\n' }],
    },
    {
      conditions: { groupResource: '*.apps' },
      strategicPatches: [
        { patchData: '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"web:2.0"}]}}}}' },
      ],
    },
  ],
});

const RULES_YAML = (sourceNamespace: string) =>
  [
    'version: v1',
    'resourceModifierRules:',
    '- conditions:',
    '    groupResource: deployments.apps',
    `    namespaces: [${sourceNamespace}]`,
    '    resourceNameRegex: "^web$"',
    '  patches:',
    '  - operation: replace',
    '    path: /spec/replicas',
    '    value: "1"',
    '- conditions:',
    '    groupResource: configmaps',
    '    labelSelector:',
    '      matchLabels: {kind: settings}',
    '  mergePatches:',
    '  - patchData: |',
    '      metadata:',
    '        labels:',
    '          restored-by: lifeboat',
    '- conditions:',
    '    groupResource: "*.apps"',
    '  strategicPatches:',
    '  - patchData: |',
    '      spec:',
    '        template:',
    '          spec:',
    '            containers:',
    '            - name: web',
    '              image: web:2.0',
  ].join('\n');

describe('restore semantics', () => {
  let kc: KubeConfig;
  let store: LocalDirectoryStore;
  let source: string;
  let backupName: string;
  let gadgets: { group: string; plural: string };

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const suffix = uniqueName('sem');
    source = suffix;
    gadgets = { group: `${suffix}.lifeboat.example`, plural: 'gadgets' };
    await core.createNamespace({ body: { metadata: { name: source } } });
    await apps.createNamespacedDeployment({
      namespace: source,
      body: {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [
                { name: 'web', image: 'web:1.0' },
                { name: 'log', image: 'log:1.0' },
              ],
            },
          },
        },
      },
    });
    await core.createNamespacedConfigMap({
      namespace: source,
      body: { metadata: { name: 'settings', labels: { kind: 'settings' } }, data: { mode: 'production' } },
    });
    // The namespace's default ServiceAccount, with an image pull secret to carry over.
    await waitFor('the default service account', () =>
      core.readNamespacedServiceAccount({ namespace: source, name: 'default' }).then(() => true),
    );
    await core.patchNamespacedServiceAccount(
      { namespace: source, name: 'default', body: { imagePullSecrets: [{ name: 'registry' }] } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // A custom resource whose status only its (absent) controller would write.
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `gadgets.${gadgets.group}` },
        spec: {
          group: gadgets.group,
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: { type: 'object', properties: { size: { type: 'integer' } } },
                    status: {
                      type: 'object',
                      properties: { phase: { type: 'string' }, observed: { type: 'integer' } },
                    },
                  },
                },
              },
            },
          ],
        },
      },
    });
    await waitFor('the gadget CRD to be established', async () => {
      const crd = await ext.readCustomResourceDefinition({ name: `gadgets.${gadgets.group}` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
    const gadget = (name: string, annotations: Record<string, string> = {}) => ({
      apiVersion: `${gadgets.group}/v1`,
      kind: 'Gadget',
      metadata: { name, annotations },
      spec: { size: 3 },
    });
    for (const [name, annotations] of [
      ['plain', {}],
      ['never', { 'velero.io/restore-status': 'false' }],
      ['always', { 'velero.io/restore-status': 'true' }],
    ] as const) {
      await waitFor('the gadget to be created', async () => {
        await custom.createNamespacedCustomObject({
          group: gadgets.group,
          version: 'v1',
          namespace: source,
          plural: 'gadgets',
          body: gadget(name, annotations),
        });
        return true;
      });
      const created = (await custom.getNamespacedCustomObject({
        group: gadgets.group,
        version: 'v1',
        namespace: source,
        plural: 'gadgets',
        name,
      })) as Record<string, unknown>;
      await custom.replaceNamespacedCustomObjectStatus({
        group: gadgets.group,
        version: 'v1',
        namespace: source,
        plural: 'gadgets',
        name,
        body: { ...created, status: { phase: 'Ready', observed: 3 } },
      });
    }

    store = await tempStore();
    backupName = uniqueName('semantics');
    const made = await backup({
      kc,
      store,
      request: backupRequest(backupName, { includedNamespaces: [source] }),
    });
    expect(made).toMatchObject({ ok: true, output: { phase: 'Completed' } });
  });

  const expectModified = async (namespace: string): Promise<void> => {
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const web = await apps.readNamespacedDeployment({ namespace, name: 'web' });
    expect(web.spec?.replicas).toBe(1);
    expect(web.spec?.template.spec?.containers.map((c) => [c.name, c.image])).toEqual([
      ['web', 'web:2.0'],
      ['log', 'log:1.0'],
    ]);
    const settings = await core.readNamespacedConfigMap({ namespace, name: 'settings' });
    expect(settings.metadata?.labels).toMatchObject({ kind: 'settings', 'restored-by': 'lifeboat' });
    expect(settings.data).toEqual({ mode: 'production' });
  };

  describe('resource modifiers', () => {
    it('change what is restored when given inline: replicas by JSON patch, a label by merge patch, an image by strategic patch', async () => {
      const target = `${source}-inline`;
      const outcome = await restore({
        kc,
        store,
        spec: {
          backupName,
          namespaceMapping: { [source]: target },
          resourceModifier: { inline: MODIFIER_RULES(source) },
        },
      });
      expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', errors: 0 } });
      await expectModified(target);
    });

    it('change what is restored when read from a ConfigMap of the target cluster', async () => {
      const core = kc.makeApiClient(CoreV1Api);
      const rulesNamespace = `${source}-rules`;
      await core.createNamespace({ body: { metadata: { name: rulesNamespace } } });
      await core.createNamespacedConfigMap({
        namespace: rulesNamespace,
        body: { metadata: { name: 'restore-rules' }, data: { 'rules.yaml': RULES_YAML(source) } },
      });
      const target = `${source}-cm`;
      const outcome = await restore({
        kc,
        store,
        // Velero's form; the ConfigMap's namespace is the restore's own.
        namespace: rulesNamespace,
        spec: {
          backupName,
          namespaceMapping: { [source]: target },
          resourceModifier: { kind: 'ConfigMap', name: 'restore-rules' },
        },
      });
      expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', errors: 0 } });
      await expectModified(target);
    });

    it('that fail on an item are errors of the restore, listed in its results, and the item is restored', async () => {
      const target = `${source}-failing`;
      const name = uniqueName('restore');
      const outcome = await restore({
        kc,
        store,
        name,
        spec: {
          backupName,
          namespaceMapping: { [source]: target },
          resourceModifier: {
            inline: {
              version: 'v1',
              resourceModifierRules: [
                {
                  conditions: { groupResource: 'deployments.apps', resourceNameRegex: '^web$' },
                  patches: [{ operation: 'remove', path: '/spec/noSuchField' }],
                },
              ],
            },
          },
        },
      });
      expect(outcome).toMatchObject({ ok: true, output: { phase: 'PartiallyFailed' } });
      const results = JSON.parse(
        gunzipSync((await store.get(restoreKeys(name).results)) ?? new Uint8Array()).toString(),
      ) as { errors: { namespaces?: Record<string, string[]> } };
      expect(results.errors.namespaces?.[target]).toEqual([
        expect.stringMatching(/^Deployment web: resource modifiers: .+/),
      ]);
      await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: target, name: 'web' });
    });

    it('show in a dry run’s plan', async () => {
      const target = `${source}-dry`;
      const dry = await restore({
        kc,
        store,
        spec: {
          backupName,
          dryRun: true,
          namespaceMapping: { [source]: target },
          resourceModifier: { inline: MODIFIER_RULES(source) },
        },
      });
      expect(dry).toMatchObject({ ok: true });
      const preview = (
        dry as unknown as { output: { preview: { phase: string; item: string; action: string }[] } }
      ).output.preview;
      expect(preview).toContainEqual({ phase: 'deployments.apps', item: `${target}/web`, action: 'create' });
      await expect(kc.makeApiClient(CoreV1Api).readNamespace({ name: target })).rejects.toThrow();
    });

    it.each([
      {
        case: 'a ConfigMap that does not exist',
        resourceModifier: { kind: 'ConfigMap', name: 'no-such-rules', namespace: 'default' },
        path: 'restore.spec.resourceModifier.name',
      },
      {
        case: 'a ConfigMap with invalid rules',
        configMap:
          'version: v1\nresourceModifierRules:\n- conditions: {groupResource: "[pods"}\n  patches: [{operation: upsert, path: /a}]\n',
        path: 'restore.spec.resourceModifier(ConfigMap default/CM).data[rules].resourceModifierRules[0].patches[0].operation',
      },
      {
        case: 'inline rules with a bad operation',
        resourceModifier: {
          inline: {
            version: 'v1',
            resourceModifierRules: [
              { conditions: { groupResource: 'pods' }, patches: [{ operation: 'upsert', path: '/a' }] },
            ],
          },
        },
        path: 'restore.spec.resourceModifier.inline.resourceModifierRules[0].patches[0].operation',
      },
    ])(
      'end the restore FailedValidation for $case, naming the field',
      async ({ resourceModifier, configMap, path }) => {
        const core = kc.makeApiClient(CoreV1Api);
        let ref = resourceModifier;
        let expectedPath = path;
        if (configMap) {
          const name = uniqueName('bad-rules');
          await core.createNamespacedConfigMap({
            namespace: 'default',
            body: { metadata: { name }, data: { rules: configMap } },
          });
          ref = { kind: 'ConfigMap', name, namespace: 'default' };
          expectedPath = path.replace('CM', name);
        }
        const target = uniqueName('never');
        const outcome = await restore({
          kc,
          store,
          spec: { backupName, namespaceMapping: { [source]: target }, resourceModifier: ref },
        });
        expect(outcome).toMatchObject({ ok: false, error: 'FailedValidation' });
        if (!outcome.ok) expect(outcome.cause).toContain(expectedPath);
        await expect(core.readNamespace({ name: target })).rejects.toThrow();
      },
    );
  });

  describe('ValidateRestore, given access to the target cluster', () => {
    const validate = (resourceModifier: Record<string, unknown>) =>
      validateRestore(
        {
          request: {
            cluster: 'target',
            restore: { metadata: { name: uniqueName('v') }, spec: { backupName, resourceModifier } },
          },
          runId: uniqueName('run'),
        },
        { store, clock: systemClock, clusterNamed: async () => new KubernetesCluster(kc) },
      );

    it('resolves the rules of a ConfigMap into the working data, and refuses a missing or invalid one by field path', async () => {
      const core = kc.makeApiClient(CoreV1Api);
      const name = uniqueName('rules');
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name }, data: { 'rules.yaml': RULES_YAML(source) } },
      });
      const valid = await validate({ kind: 'ConfigMap', name, namespace: 'default' });
      expect(valid.valid).toBe(true);
      if (!valid.valid) return;
      const resolved = await store.get(restoreWorkKeys(valid.run).resourceModifiers);
      expect(JSON.parse(Buffer.from(resolved ?? new Uint8Array()).toString())).toMatchObject({
        rules: [
          { patch: { kind: 'json', operations: [{ op: 'replace', path: '/spec/replicas', value: 1 }] } },
          { patch: { kind: 'merge' } },
          { patch: { kind: 'strategic' } },
        ],
      });

      expect(
        await validate({ kind: 'ConfigMap', name: 'no-such-rules', namespace: 'default' }),
      ).toMatchObject({
        valid: false,
        problems: [{ path: 'restore.spec.resourceModifier.name' }],
      });
      const twoKeys = uniqueName('rules');
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: twoKeys }, data: { a: RULES_YAML(source), b: RULES_YAML(source) } },
      });
      expect(await validate({ kind: 'ConfigMap', name: twoKeys, namespace: 'default' })).toMatchObject({
        valid: false,
        problems: [{ path: `restore.spec.resourceModifier(ConfigMap default/${twoKeys})` }],
      });
    });
  });

  describe('restoreStatus', () => {
    const statusOf = async (namespace: string, name: string): Promise<unknown> => {
      const custom = kc.makeApiClient(CustomObjectsApi);
      const object = (await custom.getNamespacedCustomObject({
        group: gadgets.group,
        version: 'v1',
        namespace,
        plural: gadgets.plural,
        name,
      })) as { status?: unknown };
      return object.status;
    };

    it('writes the backed-up status of the resources it names, unless an object’s annotation says false', async () => {
      const target = `${source}-status`;
      const outcome = await restore({
        kc,
        store,
        spec: {
          backupName,
          namespaceMapping: { [source]: target },
          // Fully qualified: other runs' CRDs in the same cluster also serve `gadgets`.
          restoreStatus: { includedResources: [`gadgets.${gadgets.group}`] },
        },
      });
      expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
      expect(await statusOf(target, 'plain')).toEqual({ phase: 'Ready', observed: 3 });
      expect(await statusOf(target, 'always')).toEqual({ phase: 'Ready', observed: 3 });
      expect(await statusOf(target, 'never')).toBeUndefined();
    });

    it('leaves status alone without restoreStatus, except where an object’s annotation says true', async () => {
      const target = `${source}-nostatus`;
      const outcome = await restore({
        kc,
        store,
        spec: { backupName, namespaceMapping: { [source]: target } },
      });
      expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
      expect(await statusOf(target, 'plain')).toBeUndefined();
      expect(await statusOf(target, 'never')).toBeUndefined();
      expect(await statusOf(target, 'always')).toEqual({ phase: 'Ready', observed: 3 });
    });
  });

  describe('ServiceAccounts', () => {
    it('merge the backed-up image pull secret into an existing default account, then find it equal', async () => {
      const core = kc.makeApiClient(CoreV1Api);
      const target = `${source}-sa`;
      await core.createNamespace({ body: { metadata: { name: target } } });
      await waitFor('the target namespace’s default service account', () =>
        core.readNamespacedServiceAccount({ namespace: target, name: 'default' }).then(() => true),
      );
      const results = async (name: string): Promise<string[]> => {
        const list = JSON.parse(
          gunzipSync((await store.get(restoreKeys(name).resourceList)) ?? new Uint8Array()).toString(),
        ) as Record<string, string[]>;
        return list['v1/ServiceAccount'] ?? [];
      };
      const first = uniqueName('sa-merge');
      const outcome = await restore({
        kc,
        store,
        name: first,
        spec: { backupName, namespaceMapping: { [source]: target }, includedResources: ['serviceaccounts'] },
      });
      expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', updated: 1 } });
      expect(await results(first)).toEqual([`${target}/default(updated)`]);
      const merged = await core.readNamespacedServiceAccount({ namespace: target, name: 'default' });
      expect(merged.imagePullSecrets).toEqual([{ name: 'registry' }]);
      // Velero does not add its restore labels to a merged account.
      expect(merged.metadata?.labels?.['velero.io/restore-name']).toBeUndefined();

      const second = uniqueName('sa-again');
      const again = await restore({
        kc,
        store,
        name: second,
        spec: { backupName, namespaceMapping: { [source]: target }, includedResources: ['serviceaccounts'] },
      });
      expect(again).toMatchObject({ ok: true, output: { phase: 'Completed', updated: 0 } });
      expect(await results(second)).toEqual([`${target}/default(skipped)`]);
    });
  });
});
