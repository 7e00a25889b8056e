/**
 * Issue 5's acceptance, end to end through the local state machines, the real apiserver (with
 * its PV controller) and moto's EC2: one namespace whose PVs are EBS volumes made in moto, its
 * PVCs covering each branch of the volume policy engine (a policy skip, a policy snapshot that
 * outranks a pod's fs-backup opt-in, a policy fs-backup, a legacy opt-in annotation, and one no
 * policy matches). The backup's snapshots are checked in EC2 with their tags and its
 * volumes-info against a hand-written list; the restore into a fresh namespace re-creates the
 * snapshotted volumes (encrypted with the request's KMS key), re-provisions the others, and every
 * PVC binds through the PV controller. The resource policy's includeExcludePolicy keeps
 * ConfigMaps out of the backup, and refuses old filters beside it.
 */
import type { Snapshot, Volume } from '@aws-sdk/client-ec2';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { BackupDocument } from '../../../shared/domain/storage/backup-document.js';
import { backupKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo, RestoreVolumeInfo } from '../../../shared/domain/volumes/info.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { awsConfig, uniqueName } from '../support/env.js';
import {
  ec2,
  snapshotsOfBackup,
  storedJson,
  tagMap,
  useVolumeFixtures,
  volumesOfRestore,
} from '../support/volumes.js';
import { waitFor } from '../support/wait.js';

type Obj = Record<string, unknown>;

/** A metav1.Time as Velero writes it, from what EC2 returned. */
const kubeTimeOf = (at: Date | undefined): string =>
  (at ?? new Date(0)).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Why fs-backup volumes are skipped in a run without a data mover (backup-item-block/volumes.ts). */
const NO_FILE_ACCESS =
  'no data mover of this run can reach pod volumes: a Fargate task mounts none, and fs-backup reads only local PVs under lifeboat --local with its data mover (snapshotMoveData moves EBS volumes)';

const byPvc = <T extends { pvcName?: string }>(list: readonly T[]): T[] =>
  [...list].sort((a, b) => (a.pvcName ?? '').localeCompare(b.pvcName ?? ''));

describe('volumes through a backup and a restore', () => {
  const fixtures = useVolumeFixtures();
  const zone = (): string => `${awsConfig().region}a`;

  it('snapshots, records and restores each policy branch, and every restored PVC binds', async () => {
    // Prepare: five PVCs, each over an EBS volume of moto, each in its own storage class.
    const namespace = await fixtures.namespace('vol-rt');
    const classOf = (claim: string): string => `${namespace}-${claim}`;
    const volumeTags = {
      db: { Name: 'shop-db', team: 'storage', 'cost-center': '42' },
      plain: { Name: 'shop-plain' },
    };
    const volumes = {
      skipped: await fixtures.ebsVolume({ zone: zone(), tags: { Name: 'shop-cache' } }),
      db: await fixtures.ebsVolume({ zone: zone(), tags: volumeTags.db }),
      files: await fixtures.ebsVolume({ zone: zone(), tags: { Name: 'shop-files' } }),
      optin: await fixtures.ebsVolume({ zone: zone(), tags: { Name: 'shop-optin' } }),
      plain: await fixtures.ebsVolume({ zone: zone(), tags: volumeTags.plain }),
    };
    const claim = (options: {
      name: keyof typeof volumes;
      pvcLabels: Record<string, string>;
      reclaimPolicy: 'Delete' | 'Retain';
      pod?: { name: string; annotations?: Record<string, string> };
    }): Promise<string | undefined> =>
      fixtures.claimWithVolume({
        namespace,
        claim: options.name,
        zone: zone(),
        source: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: volumes[options.name], fsType: 'ext4' } },
        pvLabels: { app: 'shop', volume: options.name },
        pvcLabels: options.pvcLabels,
        storageClass: classOf(options.name),
        reclaimPolicy: options.reclaimPolicy,
        ...(options.pod ? { pod: options.pod } : {}),
      });
    const optIn = { 'backup.velero.io/backup-volumes': 'data' };
    const pvs = {
      // Its class is skipped by the first policy; its tier: db label would match the second.
      skipped: (await claim({ name: 'skipped', pvcLabels: { tier: 'db' }, reclaimPolicy: 'Delete' })) ?? '',
      // The policy's snapshot outranks its pod's fs-backup opt-in.
      db:
        (await claim({
          name: 'db',
          pvcLabels: { tier: 'db' },
          reclaimPolicy: 'Delete',
          pod: { name: 'db', annotations: optIn },
        })) ?? '',
      files:
        (await claim({
          name: 'files',
          pvcLabels: { tier: 'files' },
          reclaimPolicy: 'Delete',
          pod: { name: 'files' },
        })) ?? '',
      // No policy matches: its pod's legacy opt-in selects fs-backup.
      optin:
        (await claim({
          name: 'optin',
          pvcLabels: { tier: 'web' },
          reclaimPolicy: 'Delete',
          pod: { name: 'optin', annotations: optIn },
        })) ?? '',
      // No policy matches, no annotation: the legacy rules snapshot it (snapshotVolumes unset).
      plain: (await claim({ name: 'plain', pvcLabels: { tier: 'web' }, reclaimPolicy: 'Retain' })) ?? '',
    };
    await fixtures.api.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { mode: 'production' } },
    });
    const policy = {
      version: 'v1',
      volumePolicies: [
        { conditions: { storageClass: [classOf('skipped')] }, action: { type: 'skip' } },
        {
          conditions: { csi: { driver: 'ebs.csi.aws.com' }, pvcLabels: { tier: 'db' } },
          action: { type: 'snapshot' },
        },
        { conditions: { pvcLabels: { tier: 'files' }, capacity: '0,10Gi' }, action: { type: 'fs-backup' } },
      ],
      includeExcludePolicy: { excludedNamespaceScopedResources: ['configmaps'] },
    };

    // Act: the backup, through the backup state machine.
    const store = await tempStore();
    const backupName = uniqueName('round-trip');
    const request = backupRequest(backupName, {
      includedNamespaces: [namespace],
      resourcePolicy: { inline: policy },
    }) as { backup: { metadata: Obj } };
    request.backup.metadata.labels = { team: 'data' };
    const outcome = await backup({
      kc: fixtures.kc,
      store,
      request,
      // The ebs.csi.aws.com PVs are snapshotted natively, through EC2.
      extra: {
        snapshotter: new EbsSnapshotter({ client: ec2() }),
        csiSnapshots: false,
        volumePollSeconds: 1,
      },
    });

    // Assess the backup: two native snapshots, the two fs-backup volumes warned about.
    expect(outcome).toMatchObject({
      ok: true,
      output: { name: backupName, phase: 'Completed', errors: 0, warnings: 2 },
    });
    const snapshots = await snapshotsOfBackup(backupName);
    expect(snapshots.map((s) => s.VolumeId).sort()).toEqual([volumes.db, volumes.plain].sort());
    const snapshotOf = (volumeId: string): Snapshot =>
      snapshots.find((s) => s.VolumeId === volumeId) ?? { SnapshotId: 'missing' };
    const db = snapshotOf(volumes.db);
    const plain = snapshotOf(volumes.plain);
    // Velero's tags (the backup's labels, velero.io/backup, velero.io/pv) win over the volume's.
    expect(tagMap(db.Tags)).toEqual({
      Name: 'shop-db',
      team: 'data',
      'cost-center': '42',
      'velero.io/storage-location': 'default',
      'velero.io/backup': backupName,
      'velero.io/pv': pvs.db,
    });
    expect(tagMap(plain.Tags)).toEqual({
      Name: 'shop-plain',
      team: 'data',
      'velero.io/storage-location': 'default',
      'velero.io/backup': backupName,
      'velero.io/pv': pvs.plain,
    });
    for (const s of [db, plain]) expect(s).toMatchObject({ State: 'completed', VolumeSize: 8 });

    const keys = backupKeys(backupName);
    const operations = await storedJson<{ spec: Obj; status: { phase: string; updated: string } }[]>(
      store,
      keys.itemOperations,
    );
    const completedAt = (snapshotId: string | undefined): string =>
      operations.find((o) => o.spec.OperationID === snapshotId)?.status.updated ?? 'missing';
    const document = await storedJson<BackupDocument>(store, keys.metadata);
    const pvInfo = (claimName: string, reclaimPolicy: string) => ({
      reclaimPolicy,
      labels: { app: 'shop', volume: claimName, 'topology.kubernetes.io/zone': zone() },
    });
    const native = (options: { claim: 'db' | 'plain'; snapshot: Snapshot; reclaimPolicy: string }) => ({
      pvcName: options.claim,
      pvcNamespace: namespace,
      pvName: pvs[options.claim],
      backupMethod: 'NativeSnapshot',
      snapshotDataMoved: false,
      preserveLocalSnapshot: false,
      skipped: false,
      startTimestamp: kubeTimeOf(options.snapshot.StartTime),
      completionTimestamp: completedAt(options.snapshot.SnapshotId),
      result: 'succeeded',
      nativeSnapshotInfo: {
        snapshotHandle: options.snapshot.SnapshotId,
        volumeType: 'io1',
        volumeAZ: zone(),
        iops: '500',
        Phase: 'Completed',
      },
      pvInfo: pvInfo(options.claim, options.reclaimPolicy),
    });
    const skipped = (claimName: 'skipped' | 'files' | 'optin', skippedReason: string) => ({
      pvcName: claimName,
      pvcNamespace: namespace,
      pvName: pvs[claimName],
      snapshotDataMoved: false,
      preserveLocalSnapshot: false,
      skipped: true,
      skippedReason,
      pvInfo: pvInfo(claimName, 'Delete'),
    });
    const infos = await storedJson<BackupVolumeInfo[]>(store, keys.volumeInfo);
    expect(byPvc(infos)).toEqual([
      native({ claim: 'db', snapshot: db, reclaimPolicy: 'Delete' }),
      skipped(
        'files',
        `podvolume: selected for fs-backup (volumePolicies[2] asks for fs-backup) of pod ${namespace}/files volume "data", but ${NO_FILE_ACCESS};`,
      ),
      skipped(
        'optin',
        `podvolume: selected for fs-backup (pod ${namespace}/optin volume "data" is opted in by backup.velero.io/backup-volumes) of pod ${namespace}/optin volume "data", but ${NO_FILE_ACCESS};`,
      ),
      native({ claim: 'plain', snapshot: plain, reclaimPolicy: 'Retain' }),
      skipped('skipped', "any: matched action is 'skip' in chosen resource policies (volumePolicies[0]);"),
    ]);
    // The generated values are the ones EC2 and the operations file hold, in order of time.
    for (const s of [db, plain]) {
      const started = Date.parse(kubeTimeOf(s.StartTime));
      const completed = Date.parse(completedAt(s.SnapshotId));
      expect(completed).toBeGreaterThanOrEqual(started);
      expect(completed).toBeLessThanOrEqual(Date.parse(String(document.status.completionTimestamp)));
    }
    expect(operations.map((o) => o.status.phase)).toEqual(['Completed', 'Completed']);
    expect(document.status).toMatchObject({
      phase: 'Completed',
      volumeSnapshotsAttempted: 2,
      volumeSnapshotsCompleted: 2,
      backupItemOperationsAttempted: 2,
      backupItemOperationsCompleted: 2,
      warnings: 2,
    });
    // includeExcludePolicy: the namespace's ConfigMaps (its own and kube-root-ca.crt) stay out.
    const resources = await storedJson<Record<string, string[]>>(store, keys.resourceList);
    expect(Object.keys(resources)).not.toContain('v1/ConfigMap');
    expect(resources['v1/PersistentVolumeClaim']?.length).toBe(5);
    expect(resources['v1/Pod']?.length).toBe(3);

    // Act: restore into a fresh namespace. The re-provisioned PVCs' classes have no provisioner:
    // the test stands in for one with a matching PV each, which the PV controller binds.
    const standIns: Record<string, string> = {};
    for (const claimName of ['skipped', 'files', 'optin']) {
      const name = uniqueName(`pv-standin-${claimName}`);
      standIns[claimName] = name;
      fixtures.pvs.push(name);
      await fixtures.api.createPersistentVolume({
        body: {
          metadata: { name, labels: { 'made-by': 'test' } },
          spec: {
            accessModes: ['ReadWriteOnce'],
            capacity: { storage: '8Gi' },
            persistentVolumeReclaimPolicy: 'Retain',
            storageClassName: classOf(claimName),
            hostPath: { path: `/tmp/${name}` },
          },
        },
      });
    }
    const target = uniqueName('vol-rt-to');
    fixtures.namespaces.push(target);
    const kmsKeyId = 'arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
    const restoreName = uniqueName('rt');
    const restored = (await runLocalRestore(
      {
        cluster: 'target',
        restore: {
          metadata: { name: restoreName },
          spec: { backupName, namespaceMapping: { [namespace]: target }, volumeKmsKeyId: kmsKeyId },
        },
      },
      {
        cluster: new KubernetesCluster(fixtures.kc),
        store,
        snapshotter: new EbsSnapshotter({ client: ec2() }),
        volumeStep: { pollWithinMs: 10_000, pollIntervalMs: 200, bindTimeoutMs: 60_000 },
      },
    )) as Obj;

    // Assess the restore: a new volume from each snapshot, in the recorded zone, with the key.
    expect(restored).toMatchObject({ phase: 'Completed', failed: 0, errors: 0 });
    const created = await volumesOfRestore(restoreName);
    expect(created.map((v) => v.SnapshotId).sort()).toEqual([db.SnapshotId, plain.SnapshotId].sort());
    const createdFrom = (snapshot: Snapshot): Volume =>
      created.find((v) => v.SnapshotId === snapshot.SnapshotId) ?? {};
    for (const v of created) {
      expect(v).toMatchObject({
        AvailabilityZone: zone(),
        VolumeType: 'io1',
        Iops: 500,
        Size: 8,
        Encrypted: true,
        KmsKeyId: kmsKeyId,
      });
      expect([volumes.db, volumes.plain]).not.toContain(v.VolumeId);
    }

    // Every restored PVC binds through the PV controller.
    const boundClaim = (claimName: string): Promise<V1PersistentVolumeClaim> =>
      waitFor(`PVC ${target}/${claimName} to bind`, async () => {
        const pvc = await fixtures.api.readNamespacedPersistentVolumeClaim({
          namespace: target,
          name: claimName,
        });
        return pvc.status?.phase === 'Bound' ? pvc : undefined;
      });
    const clones: Record<string, string> = {};
    for (const [claimName, snapshot] of [
      ['db', db],
      ['plain', plain],
    ] as const) {
      const pvc = await boundClaim(claimName);
      // The backed-up PV still exists and the namespace is mapped: a clone, as Velero names it.
      const clone = pvc.spec?.volumeName ?? '';
      expect(clone).toMatch(
        /^velero-clone-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      clones[claimName] = clone;
      const pv = await fixtures.api.readPersistentVolume({ name: clone });
      expect(pv.status?.phase).toBe('Bound');
      expect(pv.spec?.csi?.volumeHandle).toBe(createdFrom(snapshot).VolumeId);
      expect(pv.spec?.claimRef).toMatchObject({ namespace: target, name: claimName });
      expect(pv.metadata?.annotations?.['velero.io/original-pv-name']).toBe(pvs[claimName]);
      expect(tagMap(createdFrom(snapshot).Tags)).toMatchObject({
        'velero.io/restore': restoreName,
        'velero.io/pv': clone,
      });
    }
    // Skipped and fs-backup volumes are re-provisioned: bound to the stand-ins, which get the
    // backed-up reclaim policy and exactly the backed-up labels.
    for (const claimName of ['skipped', 'files', 'optin'] as const) {
      const pvc = await boundClaim(claimName);
      expect(pvc.spec?.volumeName).toBe(standIns[claimName]);
      const pv = await fixtures.api.readPersistentVolume({ name: standIns[claimName] ?? '' });
      expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
      expect(pv.metadata?.labels).toEqual(pvInfo(claimName, 'Delete').labels);
    }

    const restoreInfos = await storedJson<RestoreVolumeInfo[]>(store, restoreKeys(restoreName).volumeInfo);
    const reprovisioned = (claimName: string) => ({
      pvcName: claimName,
      pvcNamespace: target,
      snapshotDataMoved: false,
    });
    const fromSnapshot = (claimName: 'db' | 'plain', snapshot: Snapshot) => ({
      pvName: clones[claimName],
      pvcName: claimName,
      pvcNamespace: target,
      restoreMethod: 'NativeSnapshot',
      snapshotDataMoved: false,
      nativeSnapshotInfo: {
        snapshotHandle: snapshot.SnapshotId,
        volumeType: 'io1',
        volumeAZ: zone(),
        iops: '500',
        Phase: '',
      },
    });
    expect(byPvc(restoreInfos)).toEqual([
      fromSnapshot('db', db),
      reprovisioned('files'),
      reprovisioned('optin'),
      fromSnapshot('plain', plain),
      reprovisioned('skipped'),
    ]);
  });

  it("refuses old resource filters beside a resource policy's includeExcludePolicy, by field path", async () => {
    const outcome = await backup({
      kc: fixtures.kc,
      store: await tempStore(),
      request: backupRequest(uniqueName('ie-old'), {
        includedNamespaces: ['default'],
        excludedResources: ['secrets'],
        resourcePolicy: {
          inline: {
            version: 'v1',
            includeExcludePolicy: { excludedNamespaceScopedResources: ['configmaps'] },
          },
        },
      }),
    });
    expect(outcome).toMatchObject({
      ok: false,
      error: 'FailedValidation',
      cause: expect.stringContaining(
        "backup.spec.excludedResources: is an old filter parameter and cannot be used with the resource policy's includeExcludePolicy",
      ),
    });
  });
});
