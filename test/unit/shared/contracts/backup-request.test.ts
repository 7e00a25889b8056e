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
