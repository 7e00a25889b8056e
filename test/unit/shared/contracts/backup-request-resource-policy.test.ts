import { describe, expect, it } from 'vitest';
import { resourcePolicySource, validateBackupRequest } from '../../../../shared/contracts/backup-request.js';

const request = (resourcePolicy: unknown, metadata: Record<string, unknown> = {}) => ({
  cluster: 'prod',
  backup: { metadata: { name: 'nightly', ...metadata }, spec: { resourcePolicy } },
});

describe('a backup request with a resource policy', () => {
  it("accepts Velero's ConfigMap reference, read from the velero namespace by default", () => {
    const checked = validateBackupRequest(request({ kind: 'configmap', name: 'volume-policy' }));
    expect(checked.ok).toBe(true);
    if (checked.ok)
      expect(resourcePolicySource(checked.value)).toEqual({
        kind: 'configMap',
        namespace: 'velero',
        name: 'volume-policy',
      });
  });

  it("reads the ConfigMap from the given namespace, else from the backup's", () => {
    const own = validateBackupRequest(
      request({ kind: 'ConfigMap', name: 'p', namespace: 'ops' }, { namespace: 'x' }),
    );
    const backups = validateBackupRequest(
      request({ kind: 'ConfigMap', name: 'p' }, { namespace: 'lifeboat' }),
    );
    expect(own.ok && resourcePolicySource(own.value)).toMatchObject({ namespace: 'ops' });
    expect(backups.ok && resourcePolicySource(backups.value)).toMatchObject({ namespace: 'lifeboat' });
  });

  it('accepts the policy inline and validates it by field path', () => {
    const good = validateBackupRequest(
      request({
        inline: {
          version: 'v1',
          volumePolicies: [{ conditions: { storageClass: ['gp3'] }, action: { type: 'skip' } }],
        },
      }),
    );
    expect(good.ok).toBe(true);
    const bad = validateBackupRequest(
      request({
        inline: {
          version: 'v1',
          volumePolicies: [{ conditions: { capacity: '10Gi,1Gi' }, action: { type: 'move' } }],
        },
      }),
    );
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.problems.map((p) => p.path)).toEqual(
        expect.arrayContaining([
          'backup.spec.resourcePolicy.inline.volumePolicies[0].conditions.capacity',
          'backup.spec.resourcePolicy.inline.volumePolicies[0].action.type',
        ]),
      );
    }
  });

  it.each([
    [{ kind: 'Secret', name: 'p' }, 'backup.spec.resourcePolicy.kind'],
    [{ kind: 'configmap' }, 'backup.spec.resourcePolicy.name'],
    [{ kind: 'configmap', name: 'Not_A_Name' }, 'backup.spec.resourcePolicy.name'],
    [{ kind: 'configmap', name: 'p', inline: { version: 'v1' } }, 'backup.spec.resourcePolicy'],
    [{ kind: 'configmap', name: 'p', color: 'red' }, 'backup.spec.resourcePolicy'],
  ])('refuses %j at %s', (policy, path) => {
    const checked = validateBackupRequest(request(policy));
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.problems.map((p) => p.path)).toContain(path);
  });
});
