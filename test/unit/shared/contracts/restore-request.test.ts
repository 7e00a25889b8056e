import { describe, expect, it } from 'vitest';
import { validateRestoreRequest } from '../../../../shared/contracts/restore-request.js';

const request = (spec: Record<string, unknown>, name = 'restore-1') => ({
  cluster: 'dr',
  restore: { metadata: { name }, spec },
});
const paths = (input: unknown): string[] => {
  const result = validateRestoreRequest(input);
  return result.ok ? [] : result.problems.map((p) => p.path);
};

describe('the restore request', () => {
  it('accepts Velero’s restore fields and Lifeboat’s item selection and dry run', () => {
    expect(
      validateRestoreRequest(
        request({
          backupName: 'nightly',
          includedNamespaces: ['shop*'],
          excludedResources: ['secrets'],
          includeClusterResources: null,
          namespaceMapping: { shop: 'shop-dr' },
          restorePVs: true,
          preserveNodePorts: false,
          existingResourcePolicy: 'update',
          restoreStatus: { includedResources: ['widgets.example.com'] },
          hooks: {
            resources: [
              {
                name: 'h',
                postHooks: [{ exec: { command: ['true'], waitTimeout: '5m', waitForReady: true } }],
              },
            ],
          },
          itemOperationTimeout: '4h',
          resourceModifier: { kind: 'ConfigMap', name: 'mods' },
          includeItems: ['deployments.apps/shop/web', 'namespaces/shop'],
          dryRun: true,
        }),
      ),
    ).toMatchObject({ ok: true });
  });

  it.each([
    { case: 'neither backup nor schedule', spec: {}, paths: ['restore.spec.backupName'] },
    {
      case: 'both backup and schedule',
      spec: { backupName: 'a', scheduleName: 'b' },
      paths: ['restore.spec.backupName'],
    },
    {
      case: 'a non-restorable resource',
      spec: { backupName: 'a', includedResources: ['nodes'] },
      paths: ['restore.spec.includedResources[0]'],
    },
    {
      case: 'both selector kinds',
      spec: { backupName: 'a', labelSelector: {}, orLabelSelectors: [{}] },
      paths: ['restore.spec.orLabelSelectors'],
    },
    {
      case: 'an unknown policy',
      spec: { backupName: 'a', existingResourcePolicy: 'replace' },
      paths: ['restore.spec.existingResourcePolicy'],
    },
    {
      case: 'a mapping to an invalid name',
      spec: { backupName: 'a', namespaceMapping: { a: 'B_AD' } },
      paths: ['restore.spec.namespaceMapping.a'],
    },
    {
      case: 'two namespaces mapped to one',
      spec: { backupName: 'a', namespaceMapping: { a: 'x', b: 'x' } },
      paths: ['restore.spec.namespaceMapping'],
    },
    {
      case: 'a bad item selector',
      spec: { backupName: 'a', includeItems: ['just-a-name'] },
      paths: ['restore.spec.includeItems[0]'],
    },
    {
      case: 'a bad timeout',
      spec: { backupName: 'a', itemOperationTimeout: 'soon' },
      paths: ['restore.spec.itemOperationTimeout'],
    },
  ])('reports $case by field path', ({ spec, paths: expected }) => {
    expect(paths(request(spec))).toEqual(expected);
  });
});
