import { describe, expect, it } from 'vitest';
import { applyMergePatch, type JsonObject } from '../../../../../shared/domain/kubernetes/merge-patch.js';
import { serviceAccountMergePatch } from '../../../../../shared/domain/restore/service-account-merge.js';

const sa = (fields: JsonObject = {}, metadata: JsonObject = {}): JsonObject => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name: 'default', namespace: 'shop', ...metadata },
  ...fields,
});

describe('merging a backed-up ServiceAccount into an existing one', () => {
  it('adds the backed-up image pull secrets and secrets the existing account lacks, after its own', () => {
    const existing = sa({ secrets: [{ name: 'token-a' }], imagePullSecrets: [{ name: 'own' }] });
    const backedUp = sa({
      secrets: [{ name: 'token-a' }, { name: 'token-b' }],
      imagePullSecrets: [{ name: 'registry' }, { name: 'own' }],
    });
    const patch = serviceAccountMergePatch({ existing, backedUp });
    expect(patch).toEqual({
      secrets: [{ name: 'token-a' }, { name: 'token-b' }],
      imagePullSecrets: [{ name: 'own' }, { name: 'registry' }],
    });
  });

  it('adds missing labels and annotations; where both have a key the existing value stays', () => {
    const existing = sa({}, { labels: { team: 'a' }, annotations: { note: 'kept' } });
    const backedUp = sa(
      {},
      {
        labels: { team: 'b', app: 'web', 'velero.io/backup-name': 'b1', 'velero.io/restore-name': 'r1' },
        annotations: { note: 'old', 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/x' },
      },
    );
    const patch = serviceAccountMergePatch({ existing, backedUp });
    expect(patch).toEqual({
      metadata: {
        labels: { app: 'web' },
        annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/x' },
      },
    });
    expect(applyMergePatch(existing, patch)).toMatchObject({
      metadata: { labels: { team: 'a', app: 'web' }, annotations: { note: 'kept' } },
    });
  });

  it('gives no patch when the existing account already holds everything backed up', () => {
    const existing = sa(
      { secrets: [{ name: 's' }], imagePullSecrets: [{ name: 'r' }, { name: 'x' }] },
      { labels: { a: '1' }, annotations: { b: '2' } },
    );
    const backedUp = sa(
      { imagePullSecrets: [{ name: 'r' }] },
      { labels: { a: 'other', 'velero.io/restore-name': 'r1' }, annotations: { b: '2' } },
    );
    expect(serviceAccountMergePatch({ existing, backedUp })).toBeUndefined();
  });

  it('adds image pull secrets to an account that has none (the default account of a new namespace)', () => {
    const patch = serviceAccountMergePatch({
      existing: sa(),
      backedUp: sa(
        { imagePullSecrets: [{ name: 'registry' }] },
        { labels: { 'velero.io/backup-name': 'b' } },
      ),
    });
    expect(patch).toEqual({ imagePullSecrets: [{ name: 'registry' }] });
  });

  it('never removes anything from the existing account', () => {
    const existing = sa(
      {
        secrets: [{ name: 'mine' }],
        imagePullSecrets: [{ name: 'mine' }],
        automountServiceAccountToken: false,
      },
      { labels: { mine: '1' }, annotations: { mine: '2' } },
    );
    const patch = serviceAccountMergePatch({ existing, backedUp: sa({ secrets: [{ name: 'theirs' }] }) });
    const merged = applyMergePatch(existing, patch) as JsonObject;
    expect(merged).toMatchObject({
      secrets: [{ name: 'mine' }, { name: 'theirs' }],
      imagePullSecrets: [{ name: 'mine' }],
      automountServiceAccountToken: false,
      metadata: { labels: { mine: '1' }, annotations: { mine: '2' } },
    });
  });
});
