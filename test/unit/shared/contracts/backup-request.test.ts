import { describe, expect, it } from 'vitest';
import { toBackupPlan, validateBackupRequest } from '../../../../shared/contracts/backup-request.js';

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
