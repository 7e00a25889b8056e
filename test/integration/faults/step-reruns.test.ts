/**
 * Fault scenarios: a state machine step run again after it succeeded (Lambda invokes at least
 * once; Step Functions retries a step whose answer was lost), and a late Catch. A re-run must
 * change nothing already stored, byte for byte; a late failure record must never turn a finished
 * backup or restore Failed.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { readClaim } from '../../../functions/common/name-claim.js';
import { finalizeBackup } from '../../../functions/finalize-backup/finalize-backup.js';
import { finalizeRestore } from '../../../functions/finalize-restore/finalize-restore.js';
import { recordBackupFailure } from '../../../functions/record-backup-failure/record-backup-failure.js';
import { recordRestoreFailure } from '../../../functions/record-restore-failure/record-restore-failure.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { systemClock } from '../../../shared/adapters/system-clock.js';
import { backupRun } from '../../../shared/contracts/backup-run.js';
import { restoreRun } from '../../../shared/contracts/restore-run.js';
import { backupKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { objectsIn, restore, seedNamespace } from './support.js';

/** Every object under the prefix with its bytes, to compare before and after a re-run. */
async function snapshotOf(store: LocalDirectoryStore, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of await store.list(prefix))
    out.set(key, Buffer.from((await store.get(key)) ?? []).toString('base64'));
  return out;
}

describe('steps run again', () => {
  let kc: KubeConfig;
  let store: LocalDirectoryStore;
  let namespace: string;
  let name: string;

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    namespace = uniqueName('fault-rerun');
    await seedNamespace(kc, { namespace, count: 20 });
    store = await tempStore();
    name = uniqueName('rerun');
    const spec = {
      includedNamespaces: [namespace],
      includedResources: ['configmaps', 'secrets', 'namespaces'],
    };
    expect(await backup({ kc, store, request: backupRequest(name, spec) })).toMatchObject({
      ok: true,
      output: { phase: 'Completed' },
    });
  });

  const runOfBackup = async () => backupRun.parse((await readClaim(store, backupKeys(name).claim))?.run);

  it('FinalizeBackup re-run after it succeeded: same answer, every stored byte unchanged', async () => {
    const before = await snapshotOf(store, backupKeys(name).dir);
    const again = await finalizeBackup({ run: await runOfBackup() }, { store, clock: systemClock });
    expect(again).toMatchObject({ name, phase: 'Completed', errors: 0 });
    expect(await snapshotOf(store, backupKeys(name).dir)).toEqual(before);
  });

  it('a late RecordBackupFailure (the Catch of a lost answer) leaves a Completed backup Completed', async () => {
    const before = await snapshotOf(store, backupKeys(name).dir);
    await recordBackupFailure(
      { run: await runOfBackup(), failure: { Error: 'States.Timeout', Cause: 'the answer was lost' } },
      { store, clock: systemClock },
    );
    expect(await snapshotOf(store, backupKeys(name).dir)).toEqual(before);
  });

  it('FinalizeRestore re-run and a late RecordRestoreFailure: the restore’s record and files unchanged', async () => {
    const restoreName = uniqueName('rerun-restore');
    const target = uniqueName('rerun-target');
    const outcome = await restore({
      name: restoreName,
      spec: { backupName: name, namespaceMapping: { [namespace]: target } },
      cluster: new KubernetesCluster(kc),
      store,
    });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
    const run = restoreRun.parse((await readClaim(store, restoreKeys(restoreName).claim))?.run);
    const before = await snapshotOf(store, restoreKeys(restoreName).dir);
    const status = await store.get(restoreKeys(restoreName).status);
    expect(await finalizeRestore({ run }, { store, clock: systemClock })).toMatchObject({
      phase: 'Completed',
    });
    await recordRestoreFailure({ run, failure: { Error: 'States.Timeout' } }, { store, clock: systemClock });
    expect(await snapshotOf(store, restoreKeys(restoreName).dir)).toEqual(before);
    expect(await store.get(restoreKeys(restoreName).status)).toEqual(status);
    expect(await objectsIn(kc, target)).toEqual(await objectsIn(kc, namespace));
  });
});
