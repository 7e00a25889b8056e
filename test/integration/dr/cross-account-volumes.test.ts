/**
 * Issue 21's acceptance for volumes: the sample application with two EBS-backed claims (one
 * in-tree, snapshotted natively; one of the EBS CSI driver, snapshotted through CSI) is backed up
 * in account A, region 1 with `copySnapshots` to account B, region 2 (B's key, through B's role),
 * then restored by the local restore workflow into a second cluster whose stand-in EBS CSI driver
 * serves account B, region 2: every claim binds to a volume CreateVolume'd there from the copy of
 * its snapshot, encrypted with B's key; a drill of the backup as the DR deployment of B, region 2
 * reports RPO, RTO and no mismatch. Without copies the DR restore is PartiallyFailed, names each
 * volume and why, and restores everything else. moto's cross-account shim refuses a copy or a
 * volume without the share and the KMS grant, so none of this passes without them.
 */
import { gunzipSync } from 'node:zlib';
import {
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EC2Client,
  type Volume,
} from '@aws-sdk/client-ec2';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1PersistentVolume,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLocalDrill } from '../../../cli/local/drill-runtime.js';
import { type LocalRestoreOptions, runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { readDrillReport } from '../../../functions/common/drill-records.js';
import { EbsSnapshotCopies } from '../../../shared/adapters/ebs-snapshot-copies.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { backupKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo, SnapshotCopyInfo } from '../../../shared/domain/volumes/info-shapes.js';
import { type EbsCsiDriver, startEbsCsiDriver } from '../../env/ebs-csi-driver.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { storedJson } from '../support/volumes.js';
import { waitFor } from '../support/wait.js';
import {
  drAws,
  drRoleArn,
  drVolume,
  EXTERNAL_ID,
  installEbsStorage,
  installVolumeApp,
  newKey,
  REGION_2,
  useOwnCluster,
  type VolumeApp,
} from './dr-volumes-support.js';

type Obj = Record<string, unknown>;
const ZONE_2 = `${REGION_2}a`;
/** The process environment `lifeboat --local` runs with: moto's endpoint and account A's keys. */
const AMBIENT = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_ENDPOINT_URL', 'AWS_REGION'] as const;

const sourceCluster = useOwnCluster('account-a');
const drCluster = useOwnCluster('account-b');

describe('DR of EBS volumes from account A, region 1 to account B, region 2', () => {
  const saved = Object.fromEntries(AMBIENT.map((k) => [k, process.env[k]]));
  let source: KubeConfig;
  let dr: KubeConfig;
  let sourceKey: string;
  let drKey: string;
  let volumeApp: VolumeApp;
  let store: LocalDirectoryStore;
  let backupName: string;
  const drivers: EbsCsiDriver[] = [];

  /** Source namespace → a target one per case, so the cases share the DR cluster. */
  const mappingTo = (suffix: string): Record<string, string> =>
    Object.fromEntries(Object.values(volumeApp.app.namespaces).map((ns) => [ns, `${ns}-${suffix}`]));
  const dbIn = (mapping: Record<string, string>): string => mapping[volumeApp.app.namespaces.db] ?? '';

  /** The DR deployment's clients: its own EC2 in account B, region 2, and the DR cluster. */
  const drDeployment = (): LocalRestoreOptions => ({
    cluster: new KubernetesCluster(dr),
    store,
    snapshotter: new EbsSnapshotter({ client: new EC2Client({ ...drAws(), maxAttempts: 5 }) }),
    volumeStep: { pollWithinMs: 10_000, pollIntervalMs: 200, bindTimeoutMs: 60_000 },
  });

  const runBackup = async (name: string, spec: Obj): Promise<void> => {
    const made = await backup({
      kc: source,
      store,
      request: backupRequest(name, { includedNamespaces: Object.values(volumeApp.app.namespaces), ...spec }),
      extra: {
        snapshotter: new EbsSnapshotter({ client: new EC2Client({ ...awsConfig(), maxAttempts: 5 }) }),
        snapshotCopies: new EbsSnapshotCopies({
          sourceRegion: testEnv().aws.region,
          endpoint: testEnv().aws.endpoint,
        }),
        volumePollSeconds: 1,
      },
    });
    expect(made).toMatchObject({ ok: true, output: { phase: 'Completed', errors: 0 } });
  };

  const restoreRequest = (name: string, spec: Obj): Obj => ({
    cluster: 'dr',
    restore: {
      metadata: { name },
      spec: {
        volumeRegion: REGION_2,
        volumeAvailabilityZone: ZONE_2,
        volumeAccountRoleArn: drRoleArn(),
        volumeAccountExternalId: EXTERNAL_ID,
        volumeKmsKeyId: drKey,
        ...spec,
      },
    },
  });

  beforeAll(async () => {
    const env = testEnv();
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_ENDPOINT_URL: env.aws.endpoint,
      AWS_REGION: REGION_2,
    });
    source = kubeConfigFor(sourceCluster());
    dr = kubeConfigFor(drCluster());
    [sourceKey, drKey] = await Promise.all([newKey('source'), newKey('dr')]);
    drivers.push(
      startEbsCsiDriver({
        kubeconfig: sourceCluster().kubeconfig,
        aws: { endpoint: env.aws.endpoint, region: env.aws.region, credentials: awsConfig().credentials },
      }),
      startEbsCsiDriver({ kubeconfig: drCluster().kubeconfig, aws: drAws() }),
    );
    volumeApp = await installVolumeApp(source, { suffix: uniqueName('dv'), sourceKey });
    await installEbsStorage(dr, { kmsKeyId: drKey });
    store = await tempStore();
    backupName = uniqueName('to-b');
    await runBackup(backupName, {
      copySnapshots: [
        {
          account: env.aws.accounts.dr,
          region: REGION_2,
          kmsKeyId: drKey,
          roleArn: drRoleArn(),
          externalId: EXTERNAL_ID,
        },
      ],
    });
  });

  afterAll(async () => {
    for (const driver of drivers) await driver.stop();
    for (const key of AMBIENT)
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
  });

  /** The copy of each claim's snapshot in account B, region 2, by claim name. */
  const copies = async (): Promise<Record<string, SnapshotCopyInfo>> => {
    const infos = await storedJson<BackupVolumeInfo[]>(store, backupKeys(backupName).volumeInfo);
    return Object.fromEntries(
      infos.map((i) => [i.pvcName ?? '', (i.snapshotCopies ?? [])[0] as SnapshotCopyInfo]),
    );
  };

  /** The claim's volume in account B, region 2, once it is bound. */
  const boundVolume = async (namespace: string, name: string): Promise<Volume> => {
    const core = dr.makeApiClient(CoreV1Api);
    const pvc = await waitFor(`claim ${namespace}/${name} to bind in the DR cluster`, async () => {
      const found = await core.readNamespacedPersistentVolumeClaim({ namespace, name });
      return found.status?.phase === 'Bound' ? found : undefined;
    });
    const pv: V1PersistentVolume = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
    const id =
      pv.spec?.csi?.volumeHandle ?? /vol-[0-9a-f]+/.exec(pv.spec?.awsElasticBlockStore?.volumeID ?? '')?.[0];
    return drVolume(id ?? 'missing');
  };

  /** Both claims bound to volumes of account B, region 2, made from the copies, under B's key. */
  const expectVolumesFromCopies = async (namespace: string): Promise<void> => {
    const copyOf = await copies();
    for (const claim of ['data-native', 'data-csi']) {
      const volume = await boundVolume(namespace, claim);
      expect(volume, claim).toMatchObject({
        SnapshotId: copyOf[claim]?.snapshotHandle,
        AvailabilityZone: ZONE_2,
        Encrypted: true,
        KmsKeyId: drKey,
      });
    }
  };

  it("copies each snapshot into account B, region 2, re-encrypted with B's key, and records the copies", async () => {
    const copyOf = await copies();
    expect(Object.keys(copyOf).sort()).toEqual(['data-csi', 'data-native']);
    for (const [claim, copy] of Object.entries(copyOf)) {
      expect(copy, claim).toMatchObject({
        account: testEnv().aws.accounts.dr,
        region: REGION_2,
        kmsKeyId: drKey,
        Phase: 'Completed',
      });
      const seen = await new EC2Client(drAws()).send(
        new DescribeSnapshotsCommand({ SnapshotIds: [copy.snapshotHandle] }),
      );
      expect(seen.Snapshots?.[0], claim).toMatchObject({
        OwnerId: testEnv().aws.accounts.dr,
        State: 'completed',
        Encrypted: true,
        KmsKeyId: drKey,
      });
      expect(copy.snapshotHandle).not.toBe(copy.sourceSnapshotHandle);
    }
  });

  it('restores into the DR cluster with every claim bound to a volume made from its copy in account B, region 2', async () => {
    const mapping = mappingTo('r');
    const name = uniqueName('dr-restore');
    const output = await runLocalRestore(
      restoreRequest(name, { backupName, namespaceMapping: mapping }),
      drDeployment(),
    );
    expect(output).toMatchObject({ phase: 'Completed', errors: 0, failed: 0 });
    await expectVolumesFromCopies(dbIn(mapping));
    for (const driver of drivers) expect(driver.errors).toEqual([]);
  });

  it('drills the backup as the DR deployment of account B, region 2: RPO, RTO and no mismatch', async () => {
    const mapping = mappingTo('d');
    const name = uniqueName('dr-drill');
    // A DR deployment restores every volume into its own account and region (its volumeHome),
    // from the copies made for it; a drill names no zone, so one of that region is chosen.
    const home = { volumeHome: { account: testEnv().aws.accounts.dr, region: REGION_2 } };
    const output = await runLocalDrill(
      {
        cluster: 'dr',
        drill: { metadata: { name }, spec: { backupName, namespaceMapping: mapping, readyTimeout: '90s' } },
      },
      { ...drDeployment(), ...home, pollSeconds: 1 },
    );
    const report = await readDrillReport(store, name);
    expect(report?.mismatches).toEqual([]);
    expect(report?.failureReason).toBeUndefined();
    expect(output).toMatchObject({ name, phase: 'Completed', mismatches: 0 });
    expect(report).toMatchObject({
      phase: 'Completed',
      backup: { name: backupName },
      restore: { phase: 'Completed' },
    });
    expect(report?.rpoSeconds).toBeGreaterThanOrEqual(0);
    expect(report?.rtoSeconds).toBeGreaterThanOrEqual(0);
    expect(report?.volumes.map((v) => v.pvc).sort()).toEqual(
      ['data-csi', 'data-native'].map((c) => `${dbIn(mapping)}/${c}`),
    );
    await expectVolumesFromCopies(dbIn(mapping));
  }, 240_000);

  it('without copies: PartiallyFailed, naming each volume and why, with everything else restored', async () => {
    const plainBackup = uniqueName('no-copies');
    await runBackup(plainBackup, {});
    const mapping = mappingTo('n');
    const name = uniqueName('dr-no-copies');
    const output = await runLocalRestore(
      restoreRequest(name, { backupName: plainBackup, namespaceMapping: mapping }),
      drDeployment(),
    );
    expect(output).toMatchObject({ phase: 'PartiallyFailed' });
    const raw = await store.get(restoreKeys(name).results);
    const results = JSON.parse(gunzipSync(raw ?? Buffer.from('')).toString()) as {
      errors: { cluster?: string[]; namespaces?: Record<string, string[]> };
    };
    // Each volume by name, with its snapshot and why that snapshot cannot serve account B, region 2.
    const infos = await storedJson<BackupVolumeInfo[]>(store, backupKeys(plainBackup).volumeInfo);
    const info = (claim: string): BackupVolumeInfo =>
      infos.find((i) => i.pvcName === claim) ?? {
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: true,
      };
    const why = `stays in the backup's account and region, and the backup has no copy in account ${testEnv().aws.accounts.dr} region ${REGION_2} (copySnapshots)`;
    const nativePv = info('data-native').pvName ?? '';
    const db = dbIn(mapping);
    expect(results.errors.cluster).toEqual([
      `PersistentVolume ${nativePv}: Persistent volume ${nativePv} is not restored: its native snapshot ${info('data-native').nativeSnapshotInfo?.snapshotHandle} ${why}`,
    ]);
    expect(results.errors.namespaces).toEqual({
      [db]: [
        `PersistentVolumeClaim data-csi: PersistentVolumeClaim data-csi is not restored: its CSI snapshot ${info('data-csi').csiSnapshotInfo?.snapshotHandle} ${why}`,
      ],
    });
    expect(info('data-csi').csiSnapshotInfo?.snapshotHandle).toMatch(/^snap-/);
    expect(info('data-native').nativeSnapshotInfo?.snapshotHandle).toMatch(/^snap-/);

    // Everything else is there: the workloads, their configuration and secrets, the custom resources.
    const core = dr.makeApiClient(CoreV1Api);
    const apps = dr.makeApiClient(AppsV1Api);
    const shop = mapping[volumeApp.app.namespaces.shop] ?? '';
    expect((await apps.readNamespacedDeployment({ namespace: shop, name: 'web' })).metadata?.name).toBe(
      'web',
    );
    expect((await apps.readNamespacedDeployment({ namespace: db, name: 'db' })).metadata?.name).toBe('db');
    for (const [namespace, app] of [
      [shop, 'web'],
      [db, 'db'],
    ] as const) {
      await core.readNamespacedService({ namespace, name: app });
      await core.readNamespacedConfigMap({ namespace, name: `${app}-config` });
      await core.readNamespacedSecret({ namespace, name: `${app}-secret` });
    }
    const { crd } = volumeApp.app;
    const widgets = (await dr.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: crd.group,
      version: 'v1',
      namespace: shop,
      plural: crd.plural,
    })) as { items: Obj[] };
    expect(widgets.items.map((w) => (w.metadata as Obj).name).sort()).toEqual(['large', 'small']);
    // The native claim comes back, waiting for a volume no copy can give; no volume was made for either.
    const claims = await core.listNamespacedPersistentVolumeClaim({ namespace: db });
    expect(claims.items.map((c) => c.metadata?.name)).toEqual(['data-native']);
    const made = await new EC2Client(drAws()).send(
      new DescribeVolumesCommand({
        Filters: [{ Name: 'tag:velero.io/restore', Values: [name] }],
      }),
    );
    expect(made.Volumes).toEqual([]);
  });
});
