/**
 * ValidateRestore on requests broken at one to three field paths (the restore request and its
 * inline resource modifiers): each is FailedValidation naming every broken path, no exception
 * escapes, and nothing is written.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { validateRestore } from '../../../../functions/validate-restore/validate-restore.js';
import { validateRestoreRequest } from '../../../../shared/contracts/restore-request.js';
import {
  badKeyIn,
  checkRefusals,
  field,
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

const restoreRequest = (spec: Json): Json => ({
  cluster: 'dr',
  restore: { metadata: { name: 'restore-1', namespace: 'velero' }, spec: { backupName: 'nightly', ...spec } },
});

const baseRestore = (): Json =>
  restoreRequest({
    includedNamespaces: ['shop*', 'db'],
    excludedNamespaces: ['kube-system'],
    includedResources: ['*'],
    excludedResources: ['events'],
    labelSelector: {
      matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }],
    },
    namespaceMapping: { shop: 'shop-dr' },
    restoreStatus: { includedResources: ['widgets.example.com'] },
    hooks: {
      resources: [
        {
          name: 'warm',
          includedNamespaces: ['shop'],
          postHooks: [
            { exec: { container: 'app', command: ['/warm'], execTimeout: '30s', waitTimeout: '5m' } },
            {
              init: {
                initContainers: [{ name: 'seed', image: 'busybox', command: ['true'] }],
                timeout: '1m',
              },
            },
          ],
        },
      ],
    },
    itemOperationTimeout: '4h',
    resourceModifier: { kind: 'ConfigMap', name: 'mods', namespace: 'velero' },
    includeItems: ['deployments.apps/shop/web', 'namespaces/shop'],
    existingResourcePolicy: 'update',
    volumeAvailabilityZone: 'us-east-1a',
  });

const spec = (rest: string) => `restore.spec.${rest}`;
const specKeys = (...keys: (string | number)[]) => ['restore', 'spec', ...keys];
const postHook = (...keys: (string | number)[]) => specKeys('hooks', 'resources', 0, 'postHooks', ...keys);

const restoreMutations: Mutation[] = [
  field('cluster', ['cluster'], fc.oneof(invalidSubdomain, wrongType)),
  field('restore.metadata.name', ['restore', 'metadata', 'name'], fc.oneof(invalidSubdomain, wrongType)),
  field('restore.metadata.namespace', ['restore', 'metadata', 'namespace'], invalidLabel),
  field(spec('backupName'), specKeys('backupName'), fc.oneof(invalidSubdomain, wrongType)),
  field(spec('includedNamespaces[0]'), specKeys('includedNamespaces', 0), invalidNamespacePattern),
  field(spec('excludedNamespaces[0]'), specKeys('excludedNamespaces', 0), invalidNamespacePattern),
  field(spec('includedResources[0]'), specKeys('includedResources', 0), invalidResourcePattern),
  field(spec('excludedResources[0]'), specKeys('excludedResources', 0), invalidResourcePattern),
  badKeyIn(spec('labelSelector.matchLabels'), specKeys('labelSelector', 'matchLabels')),
  field(
    spec('labelSelector.matchLabels.app'),
    specKeys('labelSelector', 'matchLabels', 'app'),
    invalidLabelValue,
  ),
  field(
    spec('labelSelector.matchExpressions[0].key'),
    specKeys('labelSelector', 'matchExpressions', 0, 'key'),
    invalidLabelKey,
  ),
  field(
    spec('labelSelector.matchExpressions[0].values[0]'),
    specKeys('labelSelector', 'matchExpressions', 0, 'values', 0),
    invalidLabelValue,
  ),
  {
    path: spec('namespaceMapping'),
    value: fc.oneof(
      invalidNamespacePattern.filter((k) => k !== '*'),
      invalidLabel,
    ),
    apply: (request, key) => {
      setAt(specKeys('namespaceMapping', String(key)))(request, 'target');
    },
  },
  field(
    spec('namespaceMapping.shop'),
    specKeys('namespaceMapping', 'shop'),
    fc.oneof(invalidLabel, wrongType),
  ),
  field(
    spec('restoreStatus.includedResources[0]'),
    specKeys('restoreStatus', 'includedResources', 0),
    invalidResourcePattern,
  ),
  field(
    spec('hooks.resources[0].includedNamespaces[0]'),
    specKeys('hooks', 'resources', 0, 'includedNamespaces', 0),
    invalidNamespacePattern,
  ),
  field(
    spec('hooks.resources[0].postHooks[0].exec.execTimeout'),
    postHook(0, 'exec', 'execTimeout'),
    invalidTimeout,
  ),
  field(
    spec('hooks.resources[0].postHooks[0].exec.waitTimeout'),
    postHook(0, 'exec', 'waitTimeout'),
    invalidTimeout,
  ),
  field(
    spec('hooks.resources[0].postHooks[0].exec.container'),
    postHook(0, 'exec', 'container'),
    invalidNonEmptyLabel,
  ),
  field(spec('hooks.resources[0].postHooks[1].init.timeout'), postHook(1, 'init', 'timeout'), invalidTimeout),
  field(
    spec('includeItems[0]'),
    specKeys('includeItems', 0),
    fc.oneof(
      fc.constantFrom('x/../y', 'pods/ns/..', 'pods//x', '', 'a/b/c/d', 'just-a-name', 'pods/ns/.'),
      fc.tuple(invalidLabel, label).map(([ns, name]) => `pods/${ns}/${name}`),
      fc
        .tuple(
          invalidResourcePattern.filter((r) => !r.includes('/')),
          label,
        )
        .map(([kind, name]) => `${kind}/${name}`),
    ),
  ),
  field(spec('itemOperationTimeout'), specKeys('itemOperationTimeout'), invalidTimeout),
  field(spec('resourceModifier.namespace'), specKeys('resourceModifier', 'namespace'), invalidLabel),
  field(
    spec('existingResourcePolicy'),
    specKeys('existingResourcePolicy'),
    fc.constantFrom('replace', 'Update', '', null),
  ),
  field(
    spec('volumeAvailabilityZone'),
    specKeys('volumeAvailabilityZone'),
    fc.constantFrom('us-east-1', 'zone a', '', 'US-EAST-1A'),
  ),
  field(spec('dryRun'), specKeys('dryRun'), fc.oneof(fc.string(), fc.integer(), fc.constant(null))),
];

const baseModifiers = (): Json =>
  restoreRequest({
    resourceModifier: {
      inline: {
        version: 'v1',
        resourceModifierRules: [
          {
            conditions: {
              groupResource: 'deployments.apps',
              resourceNameRegex: '^web',
              namespaces: ['shop'],
              labelSelector: { matchLabels: { app: 'web' } },
              matches: [{ path: '/spec/replicas', value: '1' }],
            },
            patches: [{ operation: 'replace', path: '/spec/replicas', value: '2' }],
          },
          {
            conditions: { groupResource: 'configmaps' },
            mergePatches: [{ patchData: '{"data":{"a":"b"}}' }],
          },
        ],
      },
    },
  });
const mods = (rest: string) => `restore.spec.resourceModifier.inline.${rest}`;
const modKeys = (...keys: (string | number)[]) => specKeys('resourceModifier', 'inline', ...keys);
const rule = (i: number, ...keys: (string | number)[]) => modKeys('resourceModifierRules', i, ...keys);

const modifierMutations: Mutation[] = [
  field(mods('version'), modKeys('version'), fc.oneof(fc.constantFrom('v2', '', 'v 1'), wrongType)),
  field(
    mods('resourceModifierRules[0].conditions.groupResource'),
    rule(0, 'conditions', 'groupResource'),
    fc.oneof(
      fc.constant(''),
      label.map((l) => `${l}[`),
      label.map((l) => `{${l}`),
      wrongType,
    ),
  ),
  field(
    mods('resourceModifierRules[0].conditions.resourceNameRegex'),
    rule(0, 'conditions', 'resourceNameRegex'),
    fc.constantFrom('(', '[a-', '*x', '(?<', 'a{2,1}', '\\'),
  ),
  field(
    mods('resourceModifierRules[0].conditions.namespaces[0]'),
    rule(0, 'conditions', 'namespaces', 0),
    invalidLabel,
  ),
  badKeyIn(
    mods('resourceModifierRules[0].conditions.labelSelector.matchLabels'),
    rule(0, 'conditions', 'labelSelector', 'matchLabels'),
  ),
  field(
    mods('resourceModifierRules[0].conditions.matches[0].path'),
    rule(0, 'conditions', 'matches', 0, 'path'),
    fc.constantFrom('spec/replicas', '', 'x', null),
  ),
  field(
    mods('resourceModifierRules[0].patches[0].operation'),
    rule(0, 'patches', 0, 'operation'),
    fc.oneof(
      fc.constantFrom('nope', 'upsert', ''),
      label.map((l) => `x${l}!`),
    ),
  ),
  field(
    mods('resourceModifierRules[0].patches[0].path'),
    rule(0, 'patches', 0, 'path'),
    fc.constantFrom('spec/replicas', '', 'x'),
  ),
  field(
    mods('resourceModifierRules[0].patches[0].value'),
    rule(0, 'patches', 0, 'value'),
    fc.oneof(fc.constantFrom('{bad', '[1,', '{"a":}'), fc.integer(), fc.boolean()),
  ),
  field(
    mods('resourceModifierRules[1].mergePatches[0].patchData'),
    rule(1, 'mergePatches', 0, 'patchData'),
    fc.constantFrom('- a\n- b', 'a: [', '42', 'null', '"text"', '{a: 1, a: 2}'),
  ),
  field(mods('resourceModifierRules[1]'), rule(1, 'strategicPatches'), fc.constant([{ patchData: '{}' }])),
  field(
    mods('resourceModifierRules[2]'),
    rule(2),
    fc.constantFrom({}, null, 'rule', { conditions: { groupResource: 'pods' } }, { patches: [] }),
  ),
];

/** Draws RUNS broken requests; each must be FailedValidation naming its paths, writing nothing. */
const checkContract = (name: string, base: () => Json, mutations: readonly Mutation[]) =>
  checkRefusals({
    name,
    base,
    mutations,
    acceptsBase: (request) => validateRestoreRequest(request).ok,
    validate: (request, store) => validateRestore({ request, runId: 'run-1' }, { store, clock }),
  });

describe('ValidateRestore on invalid requests (property)', () => {
  it('refuses restore requests broken anywhere, by field path, writing nothing', async () => {
    await checkContract('restore requests', baseRestore, restoreMutations);
  });

  it('refuses inline resource modifiers broken anywhere, by field path, writing nothing', async () => {
    await checkContract('resource modifiers', baseModifiers, modifierMutations);
  });
});
