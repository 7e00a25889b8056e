import { describe, expect, it } from 'vitest';
import { existingAction } from '../../../../functions/restore-phase/compare.js';

const sa = (extra: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name: 'default', namespace: 'shop', labels },
  ...extra,
});

describe('what a restore does with an object that exists', () => {
  const backedUp = sa({ imagePullSecrets: [{ name: 'registry' }] }, { 'velero.io/restore-name': 'r1' });

  it.each(['none', 'update'] as const)(
    'merges a ServiceAccount that lacks a backed-up image pull secret, under policy %s',
    (policy) => {
      expect(
        existingAction({
          existing: sa({}, { own: 'x' }),
          desired: backedUp,
          policy,
          groupResource: 'serviceaccounts',
        }),
      ).toEqual({ action: 'update', patch: { imagePullSecrets: [{ name: 'registry' }] } });
    },
  );

  it('skips a ServiceAccount that holds everything backed up, without a warning', () => {
    const decided = existingAction({
      existing: sa({ imagePullSecrets: [{ name: 'registry' }], secrets: [{ name: 'own' }] }, { a: 'b' }),
      desired: sa({ imagePullSecrets: [{ name: 'registry' }] }, { a: 'c' }),
      policy: 'none',
      groupResource: 'serviceaccounts',
    });
    expect(decided).toMatchObject({ action: 'skip' });
    expect(decided.action === 'skip' && decided.reason).not.toContain('differs');
  });

  it('updates another kind with the whole backed-up object under policy update, and warns under none', () => {
    const existing = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '2' } };
    const desired = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } };
    expect(existingAction({ existing, desired, policy: 'update', groupResource: 'configmaps' })).toEqual({
      action: 'update',
      patch: desired,
    });
    expect(existingAction({ existing, desired, policy: 'none', groupResource: 'configmaps' })).toMatchObject({
      action: 'skip',
      reason: expect.stringContaining('differs'),
    });
  });
});

describe('an object that exists and differs, under policy none', () => {
  it('is skipped with Velero’s warning, naming its kind and name', () => {
    const existing = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-root-ca.crt' },
      data: { a: '2' },
    };
    const desired = { ...existing, data: { a: '1' } };
    expect(existingAction({ existing, desired, policy: 'none', groupResource: 'configmaps' })).toMatchObject({
      action: 'skip',
      warning:
        'could not restore, ConfigMap:kube-root-ca.crt already exists. Warning: the in-cluster version is different than the backed-up version',
    });
  });
});
