import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { validateRestore } from '../../../../functions/validate-restore/validate-restore.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { backupKeys } from '../../../../shared/domain/storage/keys.js';

const clock = { now: () => new Date('2026-11-24T10:00:00Z') };

/** A Completed backup in a fresh directory store whose volumes-info lists these volumes. */
async function storeWithBackup(volumes: Record<string, unknown>[]): Promise<LocalDirectoryStore> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'moved-key-')));
  const keys = backupKeys('nightly');
  await store.put(
    keys.metadata,
    JSON.stringify({
      apiVersion: 'velero.io/v1',
      kind: 'Backup',
      metadata: { name: 'nightly' },
      spec: {},
      status: { phase: 'Completed', startTimestamp: '2026-11-23T10:00:00Z' },
    }),
  );
  await store.put(keys.volumeInfo, gzipSync(JSON.stringify(volumes)));
  return store;
}

/** A volume of the backup: its data moved by `mover` (Lifeboat's or Velero's), or not moved. */
const volume = (namespace: string, mover?: { dataMover: string; Phase?: string }) => ({
  pvcName: 'data',
  pvcNamespace: namespace,
  pvName: `pv-${namespace}`,
  backupMethod: 'NativeSnapshot',
  snapshotDataMoved: mover !== undefined,
  preserveLocalSnapshot: false,
  skipped: false,
  result: 'succeeded',
  ...(mover
    ? {
        snapshotDataMovementInfo: {
          dataMover: mover.dataMover,
          uploaderType: mover.dataMover === 'lifeboat' ? 'lifeboat-block' : 'kopia',
          snapshotHandle: `nightly_vol-${namespace}`,
          operationID: `nightly_vol-${namespace}`,
          size: 8 * 2 ** 30,
          Phase: mover.Phase ?? 'Completed',
        },
      }
    : {}),
});
const byLifeboat = { dataMover: 'lifeboat' };

const restore = (spec: Record<string, unknown>) => ({
  request: {
    cluster: 'dr',
    restore: {
      metadata: { name: `r-${Math.random().toString(36).slice(2, 8)}` },
      spec: { backupName: 'nightly', ...spec },
    },
  },
  runId: 'run-1',
});

describe('ValidateRestore: the key of volumes restored from the data mover repository', () => {
  it.each([
    ['an alias ARN', 'arn:aws:kms:us-east-1:123456789012:alias/dr-volumes'],
    ['a key id', '1234abcd-12ab-34cd-56ef-1234567890ab'],
  ])('refuses %s too: StartSnapshot takes a key ARN only', async (_, key) => {
    const store = await storeWithBackup([volume('shop', byLifeboat)]);
    const outcome = await validateRestore(restore({ volumeKmsKeyId: key }), { store, clock });
    expect(outcome).toMatchObject({ valid: false });
    expect(JSON.stringify(outcome)).toContain('restore.spec.volumeKmsKeyId');
  });

  it.each([
    ['moved by Velero’s data mover (re-provisioned empty)', { dataMover: 'velero' }],
    ['whose movement did not complete (fails anyway)', { dataMover: 'lifeboat', Phase: 'Failed' }],
  ])('accepts an alias when the only moved volume was %s', async (_, mover) => {
    const store = await storeWithBackup([volume('shop', mover)]);
    expect(await validateRestore(restore({ volumeKmsKeyId: 'alias/dr' }), { store, clock })).toMatchObject({
      valid: true,
    });
  });

  it('refuses a key alias when a selected volume was moved, naming the field and the volume', async () => {
    const store = await storeWithBackup([volume('shop', byLifeboat), volume('web')]);
    const outcome = await validateRestore(restore({ volumeKmsKeyId: 'alias/dr-volumes' }), { store, clock });
    expect(outcome).toMatchObject({ valid: false });
    expect(JSON.stringify(outcome)).toContain('restore.spec.volumeKmsKeyId');
    expect(JSON.stringify(outcome)).toContain('shop/data');
    expect(JSON.stringify(outcome)).not.toContain('web/data');
  });

  it.each([
    [
      'a key ARN',
      { volumeKmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab' },
    ],
    [
      'an alias when the moved volume’s namespace is not restored',
      { volumeKmsKeyId: 'alias/x', excludedNamespaces: ['shop'] },
    ],
    ['an alias when volumes are not restored', { volumeKmsKeyId: 'alias/x', restorePVs: false }],
    [
      'a key id when no volume was moved',
      { volumeKmsKeyId: '1234abcd-12ab-34cd-56ef-1234567890ab', includedNamespaces: ['web'] },
    ],
  ])('accepts %s', async (_, spec) => {
    const store = await storeWithBackup([volume('shop', byLifeboat), volume('web')]);
    expect(await validateRestore(restore(spec), { store, clock })).toMatchObject({ valid: true });
  });
});
