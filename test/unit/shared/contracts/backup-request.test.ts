import { describe, expect, it } from 'vitest';
import {
  includeExcludePolicyProblems,
  toBackupPlan,
  validateBackupRequest,
} from '../../../../shared/contracts/backup-request.js';

const request = (spec: Record<string, unknown>, name = 'nightly') => ({
  cluster: 'prod',
  backup: { metadata: { name }, spec },
});
const problemPaths = (input: unknown): string[] => {
  const result = validateBackupRequest(input);
  return result.ok ? [] : result.problems.map((p) => p.path);
};

describe('the backup request', () => {
  it('accepts every Velero 1.17 spec field', () => {
    const result = validateBackupRequest(
      request({
        metadata: { labels: { a: 'b' } },
        includedNamespaces: ['*'],
        excludedNamespaces: ['kube-*'],
        includedResources: ['*'],
        excludedResources: ['events'],
        includeClusterResources: null,
        labelSelector: { matchLabels: { app: 'web' } },
        snapshotVolumes: true,
        ttl: '72h0m0s',
        volumeGroupSnapshotLabelKey: 'velero.io/volume-group',
        hooks: {
          resources: [{ name: 'h', pre: [{ exec: { command: ['true'], onError: 'Fail', timeout: '30s' } }] }],
        },
        storageLocation: 'default',
        volumeSnapshotLocations: ['aws'],
        defaultVolumesToRestic: false,
        defaultVolumesToFsBackup: false,
        orderedResources: { pods: 'ns/a,ns/b' },
        csiSnapshotTimeout: '10m',
        itemOperationTimeout: '4h',
        resourcePolicy: { kind: 'configmap', name: 'policy' },
        snapshotMoveData: false,
        datamover: 'velero',
        uploaderConfig: { parallelFilesUpload: 4 },
      }),
    );
    expect(result).toMatchObject({ ok: true });
  });

  it.each([
    { case: 'a bad name', input: request({}, 'Nightly_1'), paths: ['backup.metadata.name'] },
    { case: 'a bad TTL', input: request({ ttl: 'a week' }), paths: ['backup.spec.ttl'] },
    { case: 'an unknown field', input: request({ includedNamespace: ['a'] }), paths: ['backup.spec'] },
    {
      case: 'an empty namespace',
      input: request({ includedNamespaces: ['ok', ''] }),
      paths: ['backup.spec.includedNamespaces[1]'],
    },
    {
      case: 'a wrong type',
      input: request({ snapshotVolumes: 'yes' }),
      paths: ['backup.spec.snapshotVolumes'],
    },
    {
      case: 'In without values',
      input: request({ labelSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }),
      paths: ['backup.spec.labelSelector.matchExpressions[0].values'],
    },
    { case: 'no cluster', input: { backup: { metadata: { name: 'x' } } }, paths: ['cluster'] },
    {
      case: 'mixed filter styles',
      input: request({ excludedResources: ['secrets'], includedClusterScopedResources: ['*'] }),
      paths: ['backup.spec.includedClusterScopedResources'],
    },
    {
      case: 'both selector kinds',
      input: request({ labelSelector: {}, orLabelSelectors: [{}] }),
      paths: ['backup.spec.orLabelSelectors'],
    },
    {
      case: 'a namespace included and excluded',
      input: request({ includedNamespaces: ['a'], excludedNamespaces: ['a'] }),
      paths: ['backup.spec.includedNamespaces[0]'],
    },
    {
      case: 'malformed ordered resources',
      input: request({ orderedResources: { pods: 'a/b/c' } }),
      paths: ['backup.spec.orderedResources.pods'],
    },
  ])('reports $case by field path', ({ input, paths }) => {
    expect(problemPaths(input)).toEqual(paths);
  });

  it('reports every problem at once', () => {
    expect(problemPaths(request({ ttl: 'x', snapshotVolumes: 1 }, 'Bad')).sort()).toEqual([
      'backup.metadata.name',
      'backup.spec.snapshotVolumes',
      'backup.spec.ttl',
    ]);
  });

  it('applies Velero defaults in the plan', () => {
    const valid = validateBackupRequest(request({ includedNamespaceScopedResources: ['configmaps'] }));
    if (!valid.ok) throw new Error('expected a valid request');
    const plan = toBackupPlan(valid.value);
    expect(plan.ttlMs).toBe(720 * 3_600_000);
    expect(plan.resourceFilter).toEqual({
      style: 'scoped',
      clusterScoped: { includes: [], excludes: [] },
      namespaceScoped: { includes: ['configmaps'], excludes: [] },
    });
    expect(plan.namespaces).toEqual({ includes: [], excludes: [] });
  });
});

describe("a resource policy's includeExcludePolicy beside the backup's filters", () => {
  const specOf = (spec: Record<string, unknown>) => {
    const valid = validateBackupRequest(request(spec));
    if (!valid.ok) throw new Error('expected a valid request');
    return valid.value.backup.spec;
  };
  const policy = { version: 'v1', includeExcludePolicy: { excludedNamespaceScopedResources: ['secrets'] } };

  it('refuses each old filter by its field path, as Velero fails the validation', () => {
    const spec = specOf({ includedResources: ['pods'], includeClusterResources: false });
    expect(includeExcludePolicyProblems(spec, policy)).toEqual([
      {
        path: 'backup.spec.includedResources',
        message:
          "is an old filter parameter and cannot be used with the resource policy's includeExcludePolicy: use the scoped resource filters",
      },
      {
        path: 'backup.spec.includeClusterResources',
        message:
          "is an old filter parameter and cannot be used with the resource policy's includeExcludePolicy: use the scoped resource filters",
      },
    ]);
  });

  it.each([
    ['scoped filters with the policy', { includedNamespaceScopedResources: ['pods'] }, policy],
    ['no filters with the policy', {}, policy],
    [
      'old filters with a policy of volume policies only',
      { excludedResources: ['secrets'] },
      { version: 'v1' },
    ],
    ['old filters without a policy', { excludedResources: ['secrets'] }, undefined],
  ])('accepts %s', (_, spec, given) => {
    expect(includeExcludePolicyProblems(specOf(spec), given)).toEqual([]);
  });

  it('leaves namespace-scoped includes empty when only excludes are given, for a policy to add to', () => {
    const valid = validateBackupRequest(request({ excludedNamespaceScopedResources: ['secrets'] }));
    if (!valid.ok) throw new Error('expected a valid request');
    expect(toBackupPlan(valid.value).resourceFilter).toEqual({
      style: 'scoped',
      clusterScoped: { includes: [], excludes: [] },
      namespaceScoped: { includes: [], excludes: ['secrets'] },
    });
  });
});

describe('names, patterns, selectors and durations by Kubernetes’ and Velero’s rules (issue 16)', () => {
  const problemsAt = (spec: Record<string, unknown>) => {
    const result = validateBackupRequest(request(spec));
    return result.ok ? [] : result.problems;
  };
  it.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      'an upper-case namespace',
      { includedNamespaces: ['UPPER'] },
      'backup.spec.includedNamespaces[0]',
      /RFC 1123 label/,
    ],
    [
      'a namespace with a space',
      { excludedNamespaces: ['a b'] },
      'backup.spec.excludedNamespaces[0]',
      /RFC 1123 label/,
    ],
    [
      'an unclosed namespace glob',
      { includedNamespaces: ['ns-['] },
      'backup.spec.includedNamespaces[0]',
      /glob/,
    ],
    [
      'a 300-character namespace',
      { includedNamespaces: ['n'.repeat(300)] },
      'backup.spec.includedNamespaces[0]',
      /63/,
    ],
    [
      'a climbing namespace',
      { includedNamespaces: ['../x'] },
      'backup.spec.includedNamespaces[0]',
      /RFC 1123 label/,
    ],
    ['a bad resource glob', { includedResources: ['[bad'] }, 'backup.spec.includedResources[0]', /glob/],
    [
      'a bad scoped resource glob',
      { excludedNamespaceScopedResources: ['[bad'] },
      'backup.spec.excludedNamespaceScopedResources[0]',
      /glob/,
    ],
    [
      'a selector key with bad characters',
      { labelSelector: { matchLabels: { 'a b': 'x' } } },
      'backup.spec.labelSelector.matchLabels["a b"]',
      /name part/,
    ],
    [
      'a 400-character selector key',
      { labelSelector: { matchExpressions: [{ key: 'k'.repeat(400), operator: 'Exists' }] } },
      'backup.spec.labelSelector.matchExpressions[0].key',
      /63 characters/,
    ],
    [
      'a selector value with bad characters',
      { labelSelector: { matchLabels: { app: 'a b' } } },
      'backup.spec.labelSelector.matchLabels.app',
      /alphanumeric/,
    ],
    [
      'a selector expression value with bad characters',
      { labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['ok', 'x/y'] }] } },
      'backup.spec.labelSelector.matchExpressions[0].values[1]',
      /alphanumeric/,
    ],
    [
      'an empty key in orLabelSelectors',
      { orLabelSelectors: [{ matchLabels: { app: 'a' } }, { matchLabels: { '': 'b' } }] },
      'backup.spec.orLabelSelectors[1].matchLabels[""]',
      /must not be empty/,
    ],
    [
      'an empty orderedResources key',
      { orderedResources: { '': 'ns/a' } },
      'backup.spec.orderedResources[""]',
      /must not be empty/,
    ],
    [
      'an orderedResources namespace that is no namespace name',
      { orderedResources: { pods: 'Bad NS/a' } },
      'backup.spec.orderedResources.pods',
      /namespace/,
    ],
    [
      'a storage location with spaces and punctuation',
      { storageLocation: 'Bad Location!' },
      'backup.spec.storageLocation',
      /RFC 1123 subdomain/,
    ],
    [
      'a storage location with a NUL byte',
      { storageLocation: 'a\u0000b' },
      'backup.spec.storageLocation',
      /RFC 1123 subdomain/,
    ],
    [
      'a 1 MB storage location',
      { storageLocation: 's'.repeat(1 << 20) },
      'backup.spec.storageLocation',
      /253 characters/,
    ],
    [
      'a bad volume snapshot location',
      { volumeSnapshotLocations: ['Bad!'] },
      'backup.spec.volumeSnapshotLocations[0]',
      /subdomain/,
    ],
    [
      'an invalid volumeGroupSnapshotLabelKey',
      { volumeGroupSnapshotLabelKey: 'not a/label/key' },
      'backup.spec.volumeGroupSnapshotLabelKey',
      /"\/"/,
    ],
    [
      'a negative csiSnapshotTimeout',
      { csiSnapshotTimeout: '-10m' },
      'backup.spec.csiSnapshotTimeout',
      /negative/,
    ],
    [
      'an overflowing csiSnapshotTimeout',
      { csiSnapshotTimeout: '9999999999999999999h' },
      'backup.spec.csiSnapshotTimeout',
      /duration/,
    ],
    [
      'a negative itemOperationTimeout',
      { itemOperationTimeout: '-1s' },
      'backup.spec.itemOperationTimeout',
      /negative/,
    ],
    [
      'an overflowing itemOperationTimeout',
      { itemOperationTimeout: '2562048h' },
      'backup.spec.itemOperationTimeout',
      /duration/,
    ],
    ['an overflowing TTL', { ttl: '9999999999999999999h' }, 'backup.spec.ttl', /duration/],
    [
      'a negative hook timeout',
      { hooks: { resources: [{ name: 'h', pre: [{ exec: { command: ['true'], timeout: '-5s' } }] }] } },
      'backup.spec.hooks.resources[0].pre[0].exec.timeout',
      /negative/,
    ],
    [
      'an overflowing hook timeout',
      {
        hooks: {
          resources: [
            { name: 'h', post: [{ exec: { command: ['true'], timeout: '99999999999999999999s' } }] },
          ],
        },
      },
      'backup.spec.hooks.resources[0].post[0].exec.timeout',
      /duration/,
    ],
    [
      'a hook namespace that is no namespace name',
      { hooks: { resources: [{ name: 'h', includedNamespaces: ['UPPER'] }] } },
      'backup.spec.hooks.resources[0].includedNamespaces[0]',
      /RFC 1123 label/,
    ],
    [
      'a hook container that is no container name',
      {
        hooks: { resources: [{ name: 'h', pre: [{ exec: { container: 'Main App', command: ['true'] } }] }] },
      },
      'backup.spec.hooks.resources[0].pre[0].exec.container',
      /RFC 1123 label/,
    ],
    [
      'a resource policy ConfigMap namespace that is no namespace name',
      { resourcePolicy: { kind: 'configmap', name: 'p', namespace: 'a.b' } },
      'backup.spec.resourcePolicy.namespace',
      /RFC 1123 label/,
    ],
    [
      'a backup label key with bad characters',
      { metadata: { labels: { 'a b': 'x' } } },
      'backup.spec.metadata.labels["a b"]',
      /name part/,
    ],
  ])('refuses %s at its field path', (_, spec, path, message) => {
    const found = problemsAt(spec);
    expect(found.map((p) => p.path)).toEqual([path]);
    expect(found[0]?.message).toMatch(message);
  });

  it('names the request’s own namespace and labels by field path', () => {
    const result = validateBackupRequest({
      cluster: 'prod',
      backup: { metadata: { name: 'x', namespace: 'Velero NS', labels: { app: 'a b' } }, spec: {} },
    });
    expect(result.ok ? [] : result.problems.map((p) => p.path)).toEqual([
      'backup.metadata.namespace',
      'backup.metadata.labels.app',
    ]);
  });

  it.each([
    { includedNamespaces: ['*'] },
    { includedNamespaces: ['kube-*', 'app-?', 'app-[0-9]', '{prod,stage}-*'] },
    { labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'web', tier: '' } } },
    { orderedResources: { pods: 'ns/a,ns/b', persistentvolumes: 'pv-1' } },
    { csiSnapshotTimeout: '0s', itemOperationTimeout: '2562047h' },
    { volumeGroupSnapshotLabelKey: 'velero.io/volume-group' },
  ])('accepts what Kubernetes and Velero accept: %j', (spec) => {
    expect(validateBackupRequest(request(spec))).toMatchObject({ ok: true });
  });
});
