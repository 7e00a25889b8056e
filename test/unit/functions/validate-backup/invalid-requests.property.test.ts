/**
 * ValidateBackup on requests broken at one to three field paths (the backup request, its inline
 * resource policy and its inline recipe): each is FailedValidation naming every broken path, no
 * exception escapes, and nothing is written.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { validateBackup } from '../../../../functions/validate-backup/validate-backup.js';
import { validateBackupRequest } from '../../../../shared/contracts/backup-request.js';
import {
  badKeyIn,
  badKeyRecord,
  checkRefusals,
  field,
  invalidDuration,
  invalidLabel,
  invalidLabelKey,
  invalidLabelValue,
  invalidNamespacePattern,
  invalidNonEmptyLabel,
  invalidResourcePattern,
  invalidSubdomain,
  invalidTimeout,
  label,
  type Mutation,
  setAt,
  wrongType,
} from '../support/invalid-requests.js';

type Json = Record<string, unknown>;

const clock = { now: () => new Date('2026-01-01T00:00:00Z') };

const backupRequest = (spec: Json): Json => ({
  cluster: 'prod',
  backup: { metadata: { name: 'nightly', namespace: 'velero', labels: { app: 'web' } }, spec },
});

const baseBackup = (): Json =>
  backupRequest({
    includedNamespaces: ['shop', 'kube-*'],
    excludedNamespaces: ['kube-system'],
    includedResources: ['*'],
    excludedResources: ['events'],
    orLabelSelectors: [{ matchLabels: { app: 'web' } }, { matchLabels: { tier: 'db' } }],
    ttl: '720h',
    csiSnapshotTimeout: '10m',
    itemOperationTimeout: '4h',
    storageLocation: 'default',
    volumeSnapshotLocations: ['aws'],
    volumeGroupSnapshotLabelKey: 'velero.io/volume-group',
    orderedResources: { pods: 'shop/a,shop/b' },
    hooks: {
      resources: [
        {
          name: 'freeze',
          includedNamespaces: ['shop'],
          labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['db'] }] },
          pre: [{ exec: { container: 'db', command: ['/freeze'], timeout: '30s' } }],
        },
      ],
    },
    resourcePolicy: { kind: 'configmap', name: 'policy', namespace: 'velero' },
  });

const spec = (rest: string) => `backup.spec.${rest}`;
const specKeys = (...keys: (string | number)[]) => ['backup', 'spec', ...keys];
const hook = (...keys: (string | number)[]) => specKeys('hooks', 'resources', 0, ...keys);

const backupMutations: Mutation[] = [
  field('cluster', ['cluster'], fc.oneof(invalidSubdomain, wrongType)),
  field('backup.metadata.name', ['backup', 'metadata', 'name'], fc.oneof(invalidSubdomain, wrongType)),
  field('backup.metadata.namespace', ['backup', 'metadata', 'namespace'], invalidLabel),
  badKeyIn('backup.metadata.labels', ['backup', 'metadata', 'labels']),
  field('backup.metadata.labels.app', ['backup', 'metadata', 'labels', 'app'], invalidLabelValue),
  field(spec('includedNamespaces[1]'), specKeys('includedNamespaces', 1), invalidNamespacePattern),
  field(spec('excludedNamespaces[0]'), specKeys('excludedNamespaces', 0), invalidNamespacePattern),
  field(spec('includedResources[0]'), specKeys('includedResources', 0), invalidResourcePattern),
  field(spec('excludedResources[0]'), specKeys('excludedResources', 0), invalidResourcePattern),
  field(
    spec('orLabelSelectors[1].matchLabels'),
    specKeys('orLabelSelectors', 1, 'matchLabels'),
    badKeyRecord,
  ),
  field(
    spec('orLabelSelectors[0].matchLabels.app'),
    specKeys('orLabelSelectors', 0, 'matchLabels', 'app'),
    invalidLabelValue,
  ),
  field(spec('ttl'), specKeys('ttl'), fc.oneof(invalidDuration, wrongType)),
  field(spec('csiSnapshotTimeout'), specKeys('csiSnapshotTimeout'), invalidTimeout),
  field(spec('itemOperationTimeout'), specKeys('itemOperationTimeout'), invalidTimeout),
  field(spec('storageLocation'), specKeys('storageLocation'), fc.oneof(invalidSubdomain, wrongType)),
  field(spec('volumeSnapshotLocations[0]'), specKeys('volumeSnapshotLocations', 0), invalidSubdomain),
  field(spec('volumeGroupSnapshotLabelKey'), specKeys('volumeGroupSnapshotLabelKey'), invalidLabelKey),
  field(
    spec('orderedResources'),
    specKeys('orderedResources'),
    fc.oneof(
      fc
        .oneof(
          invalidResourcePattern,
          label.map((l) => `${l}*`),
        )
        .map((key) => ({ [key]: 'shop/a' })),
      fc.constantFrom('a/b/c', 'shop/', ',', 'Bad NS/x', 'shop/..').map((names) => ({ pods: names })),
    ),
  ),
  field(
    spec('hooks.resources[0].includedNamespaces[0]'),
    hook('includedNamespaces', 0),
    invalidNamespacePattern,
  ),
  field(
    spec('hooks.resources[0].labelSelector.matchExpressions[0].key'),
    hook('labelSelector', 'matchExpressions', 0, 'key'),
    invalidLabelKey,
  ),
  field(
    spec('hooks.resources[0].labelSelector.matchExpressions[0].values[0]'),
    hook('labelSelector', 'matchExpressions', 0, 'values', 0),
    invalidLabelValue,
  ),
  field(spec('hooks.resources[0].pre[0].exec.timeout'), hook('pre', 0, 'exec', 'timeout'), invalidTimeout),
  field(
    spec('hooks.resources[0].pre[0].exec.container'),
    hook('pre', 0, 'exec', 'container'),
    invalidNonEmptyLabel,
  ),
  field(spec('resourcePolicy.namespace'), specKeys('resourcePolicy', 'namespace'), invalidLabel),
];

const basePolicy = (): Json =>
  backupRequest({
    resourcePolicy: {
      inline: {
        version: 'v1',
        volumePolicies: [
          {
            conditions: {
              capacity: '0,100Gi',
              storageClass: ['gp3'],
              csi: { driver: 'ebs.csi.aws.com' },
              pvcLabels: { app: 'db' },
              volumeTypes: ['csi'],
              pvcPhase: ['Bound'],
            },
            action: { type: 'snapshot' },
          },
        ],
        includeExcludePolicy: { excludedNamespaceScopedResources: ['secrets'] },
      },
    },
  });
const policy = (rest: string) => `backup.spec.resourcePolicy.inline.${rest}`;
const policyKeys = (...keys: (string | number)[]) => specKeys('resourcePolicy', 'inline', ...keys);
const conditions = (...keys: (string | number)[]) => policyKeys('volumePolicies', 0, 'conditions', ...keys);

const policyMutations: Mutation[] = [
  field(
    policy('version'),
    policyKeys('version'),
    fc.oneof(fc.constantFrom('v2', 'V1', '', 'v1 '), wrongType),
  ),
  field(
    policy('volumePolicies[0].conditions.capacity'),
    conditions('capacity'),
    fc.oneof(
      fc.constantFrom('ten', '100Gi,1Gi', 'a,b', '1,2,3', '10Gi-20Gi'),
      fc.integer({ min: 1 }).map((n) => `${n}Xi,`),
    ),
  ),
  field(
    policy('volumePolicies[0].conditions.storageClass[0]'),
    conditions('storageClass', 0),
    invalidSubdomain,
  ),
  badKeyIn(policy('volumePolicies[0].conditions.pvcLabels'), conditions('pvcLabels')),
  field(
    policy('volumePolicies[0].conditions.pvcLabels.app'),
    conditions('pvcLabels', 'app'),
    fc.oneof(invalidLabelValue, fc.integer(), fc.boolean()),
  ),
  field(
    policy('volumePolicies[0].action.type'),
    policyKeys('volumePolicies', 0, 'action', 'type'),
    fc.oneof(
      fc.constantFrom('Skip', 'delete', '', 'fs backup'),
      label.map((l) => `${l}!`),
    ),
  ),
  field(
    policy('volumePolicies[0].conditions.volumeTypes[0]'),
    conditions('volumeTypes', 0),
    fc.constantFrom('ebs', 'CSI', ''),
  ),
  field(
    policy('volumePolicies[0].conditions.pvcPhase[0]'),
    conditions('pvcPhase', 0),
    fc.constantFrom('bound', 'Gone', ''),
  ),
  field(
    policy('volumePolicies[0].conditions.csi.driver'),
    conditions('csi'),
    fc.constant({ volumeAttributes: { a: 'b' } }),
  ),
  {
    path: policy('volumePolicies[0].conditions'),
    value: label.map((l) => `x${l}`),
    apply: (request, key) => {
      setAt(conditions(String(key)))(request, 'unknown field');
    },
  },
  field(
    policy('includeExcludePolicy.excludedNamespaceScopedResources[0]'),
    policyKeys('includeExcludePolicy', 'excludedNamespaceScopedResources', 0),
    fc.oneof(invalidResourcePattern, fc.constant('*')),
  ),
];

const baseRecipe = (): Json =>
  backupRequest({
    recipe: {
      inline: {
        groups: [
          { name: 'volumes', includedResourceTypes: ['persistentvolumeclaims'], includedNamespaces: ['db'] },
          { name: 'rest', excludedResourceTypes: ['persistentvolumeclaims'], labelSelector: 'app=db' },
        ],
        hooks: [{ name: 'freeze', commands: ['/freeze.sh'], container: 'db', timeout: 60 }],
        workflows: { backup: [{ hook: 'freeze' }, { group: 'volumes' }, { group: 'rest' }] },
      },
    },
  });
const recipe = (rest: string) => `backup.spec.recipe.inline.${rest}`;
const recipeKeys = (...keys: (string | number)[]) => specKeys('recipe', 'inline', ...keys);

const recipeMutations: Mutation[] = [
  field(recipe('groups[0].name'), recipeKeys('groups', 0, 'name'), invalidSubdomain),
  field(
    recipe('groups[0].includedNamespaces[0]'),
    recipeKeys('groups', 0, 'includedNamespaces', 0),
    invalidNamespacePattern,
  ),
  field(
    recipe('groups[0].includedResourceTypes[0]'),
    recipeKeys('groups', 0, 'includedResourceTypes', 0),
    invalidResourcePattern,
  ),
  field(
    recipe('groups[1].labelSelector'),
    recipeKeys('groups', 1, 'labelSelector'),
    fc.oneof(
      fc.constantFrom('app in (a', 'a b=c', '=x', 'app=(x)', ''),
      invalidLabelKey.filter((k) => !k.includes(' ')).map((k) => `${k}=x`),
      invalidLabelValue.filter((v) => !/[\s,]/.test(v)).map((v) => `app=${v}`),
      badKeyRecord.map((matchLabels) => ({ matchLabels })),
    ),
  ),
  field(
    recipe('hooks[0].timeout'),
    recipeKeys('hooks', 0, 'timeout'),
    fc.oneof(
      invalidTimeout,
      fc.constantFrom('0s', 0, -1, 1.5, 9_999_999_999, Number.MAX_SAFE_INTEGER),
      fc.integer({ max: 0 }),
    ),
  ),
  field(recipe('hooks[0].container'), recipeKeys('hooks', 0, 'container'), invalidLabel),
  field(
    recipe('hooks[0].commands'),
    recipeKeys('hooks', 0, 'commands'),
    fc.constantFrom([], [[]], [''], 'x', null),
  ),
  field(recipe('hooks[0].onError'), recipeKeys('hooks', 0, 'onError'), fc.constantFrom('fail', 'Stop', '')),
  field(
    recipe('workflows.backup[1]'),
    recipeKeys('workflows', 'backup', 1),
    fc.constantFrom({ group: 'volumes', hook: 'freeze' }, {}, { grp: 'volumes' }, 'volumes'),
  ),
];

/** Draws RUNS broken requests; each must be FailedValidation naming its paths, writing nothing. */
const checkContract = (name: string, base: () => Json, mutations: readonly Mutation[]) =>
  checkRefusals({
    name,
    base,
    mutations,
    acceptsBase: (request) => validateBackupRequest(request).ok,
    validate: (request, store) =>
      validateBackup({ request, runId: 'run-1' }, { store, clock, itemBlocksTimeoutSeconds: 60 }),
  });

describe('ValidateBackup on invalid requests (property)', () => {
  it('refuses backup requests broken anywhere, by field path, writing nothing', async () => {
    await checkContract('backup requests', baseBackup, backupMutations);
  });

  it('refuses inline resource policies broken anywhere, by field path, writing nothing', async () => {
    await checkContract('resource policies', basePolicy, policyMutations);
  });

  it('refuses inline recipes broken anywhere, by field path, writing nothing', async () => {
    await checkContract('recipes', baseRecipe, recipeMutations);
  });
});
