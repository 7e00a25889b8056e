/**
 * VolumeOperations removing a backup's CSI VolumeSnapshots once every operation has settled (Velero
 * DeleteReadyVolumeSnapshot), against a fake of our CsiSnapshots port and the directory store:
 * nothing while one still runs, each bound one once, a refusal and a never-bound one as warnings,
 * which FinalizeBackup turns into log lines and warnings of the backup.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finalizedVolumes } from '../../../../functions/finalize-backup/volumes.js';
import { volumeSettingsOf } from '../../../../functions/validate-backup/resource-policy.js';
import {
  readVolumeProgress,
  volumeOperations,
} from '../../../../functions/volume-operations/volume-operations.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { backupRequest } from '../../../../shared/contracts/backup-request.js';
import type { BackupRun } from '../../../../shared/contracts/backup-run.js';
import type { BlockVolumes } from '../../../../shared/contracts/backup-volumes.js';
import { LifeboatError } from '../../../../shared/domain/errors.js';
import { backupWorkKeys } from '../../../../shared/domain/storage/keys.js';
import type { VolumeSnapshotLook } from '../../../../shared/domain/volumes/operations.js';
import type { CsiSnapshots } from '../../../../shared/ports/csi-snapshots.js';

// One run per test: the workers' settings are cached per run.
let runs = 0;
const newRun = (): BackupRun => ({
  name: 'nightly',
  cluster: 'prod',
  runId: `run-${++runs}`,
  startedAt: '2026-01-01T00:00:00Z',
  expiration: '2026-01-31T00:00:00Z',
  itemBlocksTimeoutSeconds: 3600,
});
const attempt = 'a1b2c3d4';

/** VolumeSnapshots by name: their look, and whether deleting them is refused. */
class FakeCsi implements CsiSnapshots {
  readonly looks = new Map<string, VolumeSnapshotLook>();
  readonly refused = new Set<string>();
  readonly deleted: string[] = [];
  async snapshotClasses() {
    return [];
  }
  async createVolumeSnapshot(): Promise<never> {
    throw new Error('VolumeOperations never creates');
  }
  async readVolumeSnapshot(options: { name: string }) {
    return this.looks.get(options.name) ?? { exists: false };
  }
  async readVolumeSnapshotContent(options: { name: string }) {
    return {
      readyToUse: true,
      snapshotHandle: `snap-of-${options.name}`,
      deletionPolicy: 'Retain',
      driver: 'd',
    };
  }
  async retainContent() {}
  async deleteVolumeSnapshot(options: { namespace: string; name: string; contentName: string }) {
    if (this.refused.has(options.name)) throw new LifeboatError('HTTP 403: forbidden');
    this.deleted.push(`${options.namespace}/${options.name}+${options.contentName}`);
  }
}

const ready = (content: string): VolumeSnapshotLook => ({
  exists: true,
  readyToUse: true,
  boundContentName: content,
  restoreSize: 1024,
});

async function backupWith(names: readonly string[], options: { csiSnapshotTimeout?: string } = {}) {
  const run = newRun();
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-volume-ops-')));
  const work = backupWorkKeys(run);
  const json = (value: unknown) => JSON.stringify(value);
  await store.put(work.collected, json({ attempt, messages: 1, blocks: 1, items: 2, taskToken: 't' }));
  // The settings ValidateBackup stores for such a request.
  const request = backupRequest.parse({
    cluster: 'prod',
    backup: {
      metadata: { name: run.name },
      spec: { csiSnapshotTimeout: options.csiSnapshotTimeout ?? '10m' },
    },
  });
  const settings = volumeSettingsOf(request, undefined);
  await store.put(work.volumeSettings, json(settings));
  const block: BlockVolumes = {
    claims: names.map((n) => ({ namespace: 'app', name: n, volumeName: `pv-${n}` })),
    persistentVolumes: names.map((n) => ({ name: `pv-${n}`, claim: { namespace: 'app', name: n } })),
    handled: names.map((n) => ({
      pvName: `pv-${n}`,
      pvcNamespace: 'app',
      pvcName: n,
      decision: {
        action: 'snapshot',
        method: 'csi',
        moveData: false,
        reason: 'snapshotVolumes is not set to false',
      },
      csi: { volumeSnapshotNamespace: 'app', volumeSnapshotName: `vs-${n}`, driver: 'd', className: 'c' },
      startedAt: '2026-01-01T00:00:00Z',
      operation: {
        operationId: `app/vs-${n}/2026-01-01T00:00:00Z`,
        method: 'csi',
        backupItemAction: 'velero.io/csi-volumesnapshot-backupper',
        resource: {
          Group: 'snapshot.storage.k8s.io',
          Resource: 'volumesnapshots',
          Namespace: 'app',
          Name: `vs-${n}`,
        },
        postOperationItems: [],
        createdAt: '2026-01-01T00:00:00Z',
      },
    })),
  };
  await store.put(work.blockVolumes(`${attempt}-0000001`), json(block));
  return { store, run };
}

describe('CSI VolumeSnapshots removed once the backup has recorded them', () => {
  it('waits for every operation, then removes each bound VolumeSnapshot with its content, once', async () => {
    const { store, run } = await backupWith(['a', 'b']);
    const csi = new FakeCsi();
    csi.looks.set('vs-a', ready('vsc-a'));
    csi.looks.set('vs-b', { exists: true, readyToUse: false, boundContentName: 'vsc-b' });
    const deps = { store, clock: { now: () => new Date('2026-01-01T00:00:05Z') }, csiFor: async () => csi };

    const first = await volumeOperations({ run }, deps);
    expect(first).toMatchObject({ done: false, completed: 1, pending: 1 });
    expect(csi.deleted).toEqual([]);

    csi.looks.set('vs-b', ready('vsc-b'));
    const second = await volumeOperations({ run }, deps);
    expect(second).toMatchObject({ done: true, completed: 2, failed: 0 });
    expect(csi.deleted).toEqual(['app/vs-a+vsc-a', 'app/vs-b+vsc-b']);

    // A call again (a retried step) removes nothing twice.
    await volumeOperations({ run }, deps);
    expect(csi.deleted).toHaveLength(2);
    const finalized = await finalizedVolumes({ run, store, attempt, now: new Date('2026-01-01T00:00:09Z') });
    expect(finalized.log.filter((l) => l.msg.startsWith('Deleted VolumeSnapshot')).map((l) => l.msg)).toEqual(
      [
        'Deleted VolumeSnapshot app/vs-a and VolumeSnapshotContent vsc-a; the snapshot snap-of-vsc-a is kept',
        'Deleted VolumeSnapshot app/vs-b and VolumeSnapshotContent vsc-b; the snapshot snap-of-vsc-b is kept',
      ],
    );
    expect(finalized.results.warnings).toEqual({});
    expect(finalized.volumeInfos.map((i) => i.result)).toEqual(['succeeded', 'succeeded']);
  });

  it('leaves a refused removal and a never-bound VolumeSnapshot in place, as warnings of the backup', async () => {
    const { store, run } = await backupWith(['refused', 'late'], { csiSnapshotTimeout: '1s' });
    const csi = new FakeCsi();
    csi.looks.set('vs-refused', ready('vsc-refused'));
    csi.refused.add('vs-refused');
    csi.looks.set('vs-late', { exists: true, readyToUse: null });
    const deps = { store, clock: { now: () => new Date('2026-01-01T00:00:05Z') }, csiFor: async () => csi };

    expect(await volumeOperations({ run }, deps)).toMatchObject({ done: true, completed: 1, failed: 1 });
    expect(csi.deleted).toEqual([]);
    const progress = await readVolumeProgress({ run, store });
    expect(progress?.operations.map((e) => e.cleanup?.level)).toEqual(['warning', 'warning']);

    const finalized = await finalizedVolumes({ run, store, attempt, now: new Date('2026-01-01T00:00:09Z') });
    expect(finalized.results.warnings).toEqual({
      namespaces: {
        app: [
          'Failed to delete VolumeSnapshot app/vs-refused and VolumeSnapshotContent vsc-refused: HTTP 403: forbidden',
          'VolumeSnapshot app/vs-late is left in the cluster: it was never bound to a VolumeSnapshotContent',
        ],
      },
    });
    // The late one is the volume's failure (an error), not a warning of the clean-up.
    expect(finalized.results.errors).toEqual({
      namespaces: {
        app: [
          expect.stringMatching(
            /^CSI snapshot of PVC app\/late \(PV pv-late\) failed: Asynchronous action timed out/,
          ),
        ],
      },
    });
  });
});
