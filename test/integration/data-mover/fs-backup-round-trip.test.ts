/**
 * fs-backup through the data mover under `lifeboat --local`, end to end through the state
 * machines and the real apiserver: a PVC on a local PV whose directory holds a small tree (files
 * of several sizes, a subdirectory, a symlink, modes), its pod opted in by Velero's annotation.
 * The backup reads the directory with file mode (volumes-info `pvbInfo`); the restore
 * re-provisions the PVC (bound to a stand-in PV, as a provisioner would) and writes the files
 * back into the new volume once it is bound, identical entry by entry.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localRepository } from '../../../cli/local/local-data-mover.js';
import { runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import { backupKeys, repositoryKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo, RestoreVolumeInfo } from '../../../shared/domain/volumes/info.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { awsConfig, uniqueName } from '../support/env.js';
import { storedJson, useVolumeFixtures } from '../support/volumes.js';

/** Every entry under a directory: its type, mode, and content hash or link target. */
async function treeOf(root: string, at = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(join(root, at))).sort()) {
    const path = join(at, name);
    const stat = await lstat(join(root, path));
    const mode = (stat.mode & 0o7777).toString(8);
    if (stat.isSymbolicLink()) out[path] = `link -> ${await readlink(join(root, path))}`;
    else if (stat.isDirectory()) {
      out[path] = `dir ${mode}`;
      Object.assign(out, await treeOf(root, path));
    } else
      out[path] = `file ${mode} ${stat.size} ${createHash('sha256')
        .update(await readFile(join(root, path)))
        .digest('hex')}`;
  }
  return out;
}

describe('fs-backup through the data mover (lifeboat --local)', () => {
  const fixtures = useVolumeFixtures();

  it("backs up a local PV's files and restores them into the re-provisioned volume, entry by entry", async () => {
    // Prepare: the volume's directory and the PVC, its pod opted into fs-backup.
    const source = await mkdtemp(join(tmpdir(), 'fs-backup-source-'));
    await mkdir(join(source, 'db', 'wal'), { recursive: true });
    await writeFile(join(source, 'db', 'table.dat'), randomBytes(3 * 1024 * 1024 + 17));
    await writeFile(join(source, 'db', 'wal', '0001'), 'x'.repeat(70_000));
    await writeFile(join(source, 'README'), 'hello\n');
    await chmod(join(source, 'README'), 0o640);
    await symlink('db/table.dat', join(source, 'current'));
    const expected = await treeOf(source);
    const namespace = await fixtures.namespace('fs-backup');
    const storageClass = uniqueName('local');
    const local = (path: string) => ({
      local: { path },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
          ],
        },
      },
    });
    const pvName =
      (await fixtures.claimWithVolume({
        namespace,
        claim: 'data',
        source: local(source),
        storageClass,
        reclaimPolicy: 'Delete',
        pod: { name: 'db', annotations: { 'backup.velero.io/backup-volumes': 'data' } },
      })) ?? '';
    const store = await tempStore();
    const repository = localRepository(
      store,
      join(await mkdtemp(join(tmpdir(), 'lifeboat-key-')), 'repository.key'),
    );
    const dataMover = { repository, region: awsConfig().region };

    // Act: the backup.
    const name = uniqueName('fs');
    const outcome = await backup({
      kc: fixtures.kc,
      store,
      request: backupRequest(name, { includedNamespaces: [namespace] }),
      extra: { csiSnapshots: false, volumePollSeconds: 1, dataMover },
    });

    // Assess: the volume's files in the repository, recorded as a pod volume backup.
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', errors: 0, warnings: 0 } });
    const [info] = await storedJson<BackupVolumeInfo[]>(store, backupKeys(name).volumeInfo);
    const manifestId = info?.pvbInfo?.snapshotHandle ?? '';
    expect(manifestId).toMatch(new RegExp(`^${name}_pv\\.${pvName}_\\d{8}T\\d{6}Z$`));
    expect(info).toEqual({
      pvcName: 'data',
      pvcNamespace: namespace,
      pvName,
      backupMethod: 'PodVolumeBackup',
      snapshotDataMoved: false,
      preserveLocalSnapshot: false,
      skipped: false,
      startTimestamp: expect.any(String),
      completionTimestamp: expect.any(String),
      result: 'succeeded',
      pvbInfo: {
        snapshotHandle: manifestId,
        size: 3 * 1024 * 1024 + 17 + 70_000 + 6,
        uploaderType: 'lifeboat-file',
        volumeName: 'data',
        podName: 'db',
        podNamespace: namespace,
        nodeName: '',
        Phase: 'Completed',
      },
      pvInfo: { reclaimPolicy: 'Delete', labels: { app: 'db' } },
    });
    expect(await store.exists(repositoryKeys.snapshot(manifestId))).toBe(true);

    // Act: restore under a new namespace; an empty local PV of the class stands in for a provisioner.
    const target = uniqueName('fs-backup-to');
    fixtures.namespaces.push(target);
    const into = await mkdtemp(join(tmpdir(), 'fs-backup-target-'));
    const standIn = uniqueName('pv-standin');
    fixtures.pvs.push(standIn);
    await fixtures.api.createPersistentVolume({
      body: {
        metadata: { name: standIn },
        spec: {
          accessModes: ['ReadWriteOnce'],
          capacity: { storage: '8Gi' },
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: storageClass,
          ...local(into),
        },
      },
    });
    const restoreName = uniqueName('fs-restore');
    const restored = await runLocalRestore(
      {
        cluster: 'source',
        restore: {
          metadata: { name: restoreName },
          spec: { backupName: name, namespaceMapping: { [namespace]: target } },
        },
      },
      {
        cluster: new KubernetesCluster(fixtures.kc),
        store,
        dataMover,
        volumeStep: { pollWithinMs: 5_000, pollIntervalMs: 200, bindTimeoutMs: 60_000 },
      },
    );

    // Assess: the PVC bound to the stand-in, and the stand-in's directory holds the same tree.
    expect(restored).toMatchObject({ phase: 'Completed', errors: 0, warnings: 0 });
    const bound = await fixtures.boundVolume({ namespace: target, claim: 'data' });
    expect(bound.pvName).toBe(standIn);
    expect(await treeOf(into)).toEqual(expected);
    const restoreInfos = await storedJson<RestoreVolumeInfo[]>(store, restoreKeys(restoreName).volumeInfo);
    expect(restoreInfos).toEqual([
      {
        pvcName: 'data',
        pvcNamespace: target,
        restoreMethod: 'PodVolumeRestore',
        snapshotDataMoved: false,
        pvrInfo: {
          snapshotHandle: manifestId,
          uploaderType: 'lifeboat-file',
          volumeName: 'data',
          podName: 'db',
          podNamespace: target,
          Phase: 'Completed',
        },
      },
    ]);
  }, 300_000);
});
