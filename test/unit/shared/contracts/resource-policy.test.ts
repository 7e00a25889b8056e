import { describe, expect, it } from 'vitest';
import {
  parseResourcePolicy,
  resourcePolicyFromConfigMap,
  validateResourcePolicy,
} from '../../../../shared/contracts/resource-policy.js';

const problems = (result: ReturnType<typeof parseResourcePolicy>) => (result.ok ? [] : result.problems);

const FULL = `version: v1
volumePolicies:
  - conditions:
      capacity: "10Gi,100Gi"
      storageClass: [gp3, gp2]
      nfs: {server: 1.2.3.4, path: /x}
      csi: {driver: ebs.csi.aws.com, volumeAttributes: {type: gp3}}
      volumeTypes: [awsElasticBlockStore, csi]
      pvcLabels: {app: db}
      pvcPhase: [Pending, Lost]
    action:
      type: snapshot
      parameters: {note: kept}
  - conditions:
      nfs: {}
    action: {type: fs-backup}
  - conditions: {}
    action: {type: skip}
includeExcludePolicy:
  includedClusterScopedResources: [storageclasses]
  excludedClusterScopedResources: [clusterroles]
  includedNamespaceScopedResources: [deployments, persistentvolumeclaims]
  excludedNamespaceScopedResources: [secrets]
`;

describe('resource policy documents', () => {
  it('accept every condition, action and the include/exclude policy', () => {
    const result = parseResourcePolicy(FULL);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.volumePolicies?.map((p) => p.action.type)).toEqual(['snapshot', 'fs-backup', 'skip']);
    expect(result.value.volumePolicies?.[0]?.conditions).toEqual({
      capacity: '10Gi,100Gi',
      storageClass: ['gp3', 'gp2'],
      nfs: { server: '1.2.3.4', path: '/x' },
      csi: { driver: 'ebs.csi.aws.com', volumeAttributes: { type: 'gp3' } },
      volumeTypes: ['awsElasticBlockStore', 'csi'],
      pvcLabels: { app: 'db' },
      pvcPhase: ['Pending', 'Lost'],
    });
    expect(result.value.includeExcludePolicy?.excludedNamespaceScopedResources).toEqual(['secrets']);
  });

  it('accept a JSON document and a policy with no conditions (matches everything)', () => {
    expect(parseResourcePolicy('{"version":"v1","volumePolicies":[{"action":{"type":"skip"}}]}').ok).toBe(
      true,
    );
    expect(
      parseResourcePolicy('version: v1\nvolumePolicies:\n- conditions:\n  action: {type: skip}\n').ok,
    ).toBe(true);
  });

  it.each([
    ['an unknown top-level field', 'version: v1\nvolumePolicy: []\n', 'volumePolicy', 'unknown field'],
    [
      'an unknown condition',
      'version: v1\nvolumePolicies:\n- conditions: {capacity: "0,1Gi", unknown: {}}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.unknown',
      'unknown field',
    ],
    [
      'an unknown policy field',
      'version: v1\nvolumePolicies:\n- action: {type: skip}\n  invalid-key: value\n',
      'volumePolicies[0].invalid-key',
      'unknown field',
    ],
    [
      'a wrong version',
      'version: v2\n',
      'version',
      'incompatible version number v2 with supported version v1',
    ],
    ['a missing version', 'volumePolicies: []\n', 'version', 'is required'],
    [
      'an unknown action',
      'version: v1\nvolumePolicies:\n- action: {type: backup}\n',
      'volumePolicies[0].action.type',
      'must be skip, snapshot or fs-backup',
    ],
    [
      'a missing action',
      'version: v1\nvolumePolicies:\n- conditions: {}\n',
      'volumePolicies[0].action',
      'is required',
    ],
    [
      'a scalar storageClass',
      'version: v1\nvolumePolicies:\n- conditions: {storageClass: gp2}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.storageClass',
      'a list of strings',
    ],
    [
      'a scalar csi',
      'version: v1\nvolumePolicies:\n- conditions: {csi: gp2}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.csi',
      'must be a map',
    ],
    [
      'a scalar nfs',
      'version: v1\nvolumePolicies:\n- conditions: {nfs: abc}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.nfs',
      'must be a map',
    ],
    [
      'a scalar pvcLabels',
      'version: v1\nvolumePolicies:\n- conditions: {pvcLabels: production}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.pvcLabels',
      'a map of strings',
    ],
    [
      'an unquoted number label',
      'version: v1\nvolumePolicies:\n- conditions: {pvcLabels: {tier: 1}}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.pvcLabels.tier',
      'quote values',
    ],
    [
      'a bad capacity',
      'version: v1\nvolumePolicies:\n- conditions: {capacity: invalid-capacity}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.capacity',
      'must be "lower,upper"',
    ],
    [
      'an inverted capacity',
      'version: v1\nvolumePolicies:\n- conditions: {capacity: "100Gi,10Gi"}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.capacity',
      'lower bound is above',
    ],
    [
      'csi attributes without a driver',
      'version: v1\nvolumePolicies:\n- conditions: {csi: {volumeAttributes: {a: b}}}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.csi.driver',
      'csi driver should not be empty when filtering by volume attributes',
    ],
    [
      'an unknown volume type',
      'version: v1\nvolumePolicies:\n- conditions: {volumeTypes: [ebs]}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.volumeTypes[0]',
      'expected one of "awsAzureDisk"',
    ],
    [
      'an unknown PVC phase',
      'version: v1\nvolumePolicies:\n- conditions: {pvcPhase: [Bund]}\n  action: {type: skip}\n',
      'volumePolicies[0].conditions.pvcPhase[0]',
      'expected one of "Pending"|"Bound"|"Lost"',
    ],
    [
      'a wildcard include',
      'version: v1\nincludeExcludePolicy: {includedClusterScopedResources: ["*"]}\n',
      'includeExcludePolicy.includedClusterScopedResources[0]',
      "cannot use '*'",
    ],
    [
      'a resource both included and excluded',
      'version: v1\nincludeExcludePolicy: {includedNamespaceScopedResources: [secrets], excludedNamespaceScopedResources: [pods, secrets]}\n',
      'includeExcludePolicy.excludedNamespaceScopedResources[1]',
      'excludes list cannot contain an item in the includes list: secrets',
    ],
  ])('refuse %s, naming the field', (_, yaml, path, message) => {
    const found = problems(parseResourcePolicy(yaml));
    expect(found).toContainEqual({ path, message: expect.stringContaining(message) });
  });

  it.each([
    ['a duplicate key', 'version: v1\nversion: v1\n', 'Map keys must be unique'],
    ['several documents', 'version: v1\n---\nversion: v1\n', 'multiple documents'],
    ['broken syntax', 'version: [v1\n', 'YAML'],
  ])('refuse %s with the line', (_, yaml, message) => {
    const [problem] = problems(parseResourcePolicy(yaml));
    expect(problem?.path).toBe('(document)');
    expect(problem?.message).toContain(message);
    expect(problem?.message).toMatch(/line \d+, column \d+/);
  });

  it('refuse an empty document and a document that is not a map', () => {
    expect(problems(parseResourcePolicy(''))).toEqual([
      { path: '(document)', message: 'the document must be a map with version: v1' },
    ]);
    expect(problems(parseResourcePolicy('- a\n- b\n'))[0]?.path).toBe('(document)');
  });

  it('refuse an alias bomb instead of expanding it', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i++)
      lines.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    lines.push('version: v1');
    expect(problems(parseResourcePolicy(lines.join('\n')))).toEqual([
      { path: '(document)', message: expect.stringContaining('Excessive alias count') },
    ]);
  });

  it('validate the inline (already decoded) form with a path prefix', () => {
    const result = validateResourcePolicy(
      { version: 'v1', volumePolicies: [{ action: { type: 'nope' } }] },
      'backup.spec.resourcePolicyDocument',
    );
    expect(problems(result)).toEqual([
      {
        path: 'backup.spec.resourcePolicyDocument.volumePolicies[0].action.type',
        message: 'must be skip, snapshot or fs-backup',
      },
    ]);
  });
});

describe('resource policy ConfigMaps', () => {
  it('read the only data key, whatever its name', () => {
    const result = resourcePolicyFromConfigMap({
      namespace: 'velero',
      name: 'policy',
      data: { 'anything.yaml': FULL },
    });
    expect(result.ok).toBe(true);
  });

  it.each([
    ['no data', undefined, 0],
    ['empty data', {}, 0],
    ['two keys', { a: 'version: v1', b: 'version: v1' }, 2],
  ])('refuse %s', (_, data, count) => {
    const result = resourcePolicyFromConfigMap({ namespace: 'velero', name: 'policy', data });
    expect(problems(result)).toEqual([
      {
        path: 'data',
        message: `illegal resource policies velero/policy configmap: data must have exactly one key, it has ${count}`,
      },
    ]);
  });

  it('name problems inside the document under its data key', () => {
    const result = resourcePolicyFromConfigMap({
      name: 'policy',
      data: { 'policy.yaml': 'version: v1\nextra: 1\n' },
    });
    expect(problems(result)).toEqual([{ path: 'data["policy.yaml"].extra', message: 'unknown field' }]);
  });
});

describe('a resource policy version that is no string', () => {
  it.each([
    ['an object without prototype', Object.create(null) as unknown],
    ['a list', ['v1']],
    ['null', null],
  ])('is refused by field path, never with an exception: %s', (_, version) => {
    const result = validateResourcePolicy({ version }, 'inline');
    expect(result.ok ? [] : result.problems).toEqual([
      { path: 'inline.version', message: expect.stringContaining('with supported version v1') },
    ]);
  });
});
