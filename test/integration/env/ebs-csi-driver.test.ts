/**
 * The test environment's stand-in EBS CSI driver (test/env/ebs-csi-driver.ts) against the real
 * apiserver (its PV binder binds what the stand-in provisions) and moto's EC2 and KMS: an empty
 * volume for a claim of its class, encrypted with the class's key; a VolumeSnapshot of that claim
 * taken in EC2; a pre-provisioned VolumeSnapshot over an EBS snapshot of its account and region
 * made ready, and a claim filled from it bound to a volume CreateVolume'd from that snapshot; and
 * one over a snapshot of another region failed with an error status, its claim left Pending with
 * no volume made. A driver name of this file only keeps the stand-in off other tests' volumes.
 */
import {
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EC2Client,
  type Volume,
} from '@aws-sdk/client-ec2';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  StorageV1Api,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EbsCsiDriver, startEbsCsiDriver } from '../../env/ebs-csi-driver.js';
import { installCsiSnapshotApi } from '../../fixtures/volume-snapshot-class-crd.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

type Obj = Record<string, unknown>;
const group = 'snapshot.storage.k8s.io';
const version = 'v1';
const OTHER_REGION = 'us-west-2';

describe('the stand-in EBS CSI driver', () => {
  const driverName = `${uniqueName('ebs')}.csi.test.lifeboat.dev`;
  const storageClass = uniqueName('ebs-sc');
  const snapshotClass = uniqueName('ebs-vsc');
  let kc: KubeConfig;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let ec2: EC2Client;
  let namespace: string;
  let classKey: string;
  let driver: EbsCsiDriver;

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    core = kc.makeApiClient(CoreV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    ec2 = new EC2Client(awsConfig());
    await installCsiSnapshotApi(kc);
    namespace = uniqueName('ebs-csi');
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const key = await new KMSClient(awsConfig()).send(new CreateKeyCommand({ Description: 'class key' }));
    classKey = key.KeyMetadata?.Arn ?? '';
    await kc.makeApiClient(StorageV1Api).createStorageClass({
      body: {
        metadata: { name: storageClass },
        provisioner: driverName,
        parameters: { type: 'gp3', encrypted: 'true', kmsKeyId: classKey },
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
      },
    });
    await custom.createClusterCustomObject({
      group,
      version,
      plural: 'volumesnapshotclasses',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'VolumeSnapshotClass',
        metadata: { name: snapshotClass },
        driver: driverName,
        deletionPolicy: 'Retain',
      },
    });
    const env = testEnv();
    driver = startEbsCsiDriver({
      kubeconfig: env.clusters.source.kubeconfig,
      aws: { endpoint: env.aws.endpoint, region: env.aws.region, credentials: awsConfig().credentials },
      driver: driverName,
      namespaces: [namespace],
      intervalMs: 200,
    });
  });

  afterAll(async () => {
    await driver?.stop();
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await kc.makeApiClient(StorageV1Api).deleteStorageClass({ name: storageClass });
  });

  const claim = (name: string, extra: Obj = {}): Promise<V1PersistentVolumeClaim> =>
    core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: storageClass,
          resources: { requests: { storage: '2Gi' } },
          ...extra,
        },
      },
    });

  const bound = (name: string): Promise<V1PersistentVolumeClaim> =>
    waitFor(`PVC ${name} to bind`, async () => {
      const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace, name });
      return pvc.status?.phase === 'Bound' ? pvc : undefined;
    });

  const volumeOf = async (pvc: V1PersistentVolumeClaim): Promise<Volume> => {
    const pv = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
    expect(pv.spec?.csi?.driver).toBe(driverName);
    const found = await ec2.send(
      new DescribeVolumesCommand({ VolumeIds: [pv.spec?.csi?.volumeHandle ?? ''] }),
    );
    return found.Volumes?.[0] ?? {};
  };

  const snapshotStatus = async (name: string): Promise<Obj> =>
    (
      (await custom.getNamespacedCustomObject({
        group,
        version,
        namespace,
        plural: 'volumesnapshots',
        name,
      })) as Obj
    ).status as Obj;

  /** A VolumeSnapshotContent and VolumeSnapshot over an existing snapshot, as a restore writes them. */
  const preProvisioned = async (name: string, snapshotHandle: string): Promise<void> => {
    await custom.createClusterCustomObject({
      group,
      version,
      plural: 'volumesnapshotcontents',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'VolumeSnapshotContent',
        metadata: { name },
        spec: {
          deletionPolicy: 'Retain',
          driver: driverName,
          source: { snapshotHandle },
          volumeSnapshotRef: { apiVersion: `${group}/${version}`, kind: 'VolumeSnapshot', namespace, name },
        },
      },
    });
    await custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: 'volumesnapshots',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'VolumeSnapshot',
        metadata: { name },
        spec: { source: { volumeSnapshotContentName: name } },
      },
    });
  };

  const fromSnapshot = (name: string) => ({ dataSource: { apiGroup: group, kind: 'VolumeSnapshot', name } });

  it('provisions an empty volume encrypted with its class key, and snapshots it for a VolumeSnapshot of the claim', async () => {
    await claim('empty');
    const pvc = await bound('empty');
    const volume = await volumeOf(pvc);
    expect(volume).toMatchObject({ Size: 2, VolumeType: 'gp3', Encrypted: true, KmsKeyId: classKey });
    expect(volume.SnapshotId ?? '').toBe('');
    const pv = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
    expect(pv.spec?.claimRef).toMatchObject({ namespace, name: 'empty', uid: pvc.metadata?.uid });
    expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Delete');

    await custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: 'volumesnapshots',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'VolumeSnapshot',
        metadata: { name: 'of-empty' },
        spec: { volumeSnapshotClassName: snapshotClass, source: { persistentVolumeClaimName: 'empty' } },
      },
    });
    const status = await waitFor('the VolumeSnapshot to be ready', async () => {
      const s = await snapshotStatus('of-empty');
      return s?.readyToUse === true ? s : undefined;
    });
    const content = (await custom.getClusterCustomObject({
      group,
      version,
      plural: 'volumesnapshotcontents',
      name: String(status.boundVolumeSnapshotContentName),
    })) as { spec: Obj; status: Obj };
    expect(content.spec).toMatchObject({ driver: driverName, deletionPolicy: 'Retain' });
    const handle = String(content.status.snapshotHandle);
    const { Snapshots } = await ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [handle] }));
    expect(Snapshots?.[0]).toMatchObject({ VolumeId: volume.VolumeId, State: 'completed' });
    expect(driver.errors).toEqual([]);
  });

  it('makes a pre-provisioned VolumeSnapshot ready and fills a claim from it with a volume of that snapshot', async () => {
    const key = await new KMSClient(awsConfig()).send(new CreateKeyCommand({ Description: 'snapshot key' }));
    const source = await ec2.send(
      new CreateVolumeCommand({
        AvailabilityZone: `${testEnv().aws.region}a`,
        Size: 3,
        Encrypted: true,
        KmsKeyId: key.KeyMetadata?.Arn,
      }),
    );
    const snapshot = await ec2.send(new CreateSnapshotCommand({ VolumeId: source.VolumeId }));
    await preProvisioned('restored', snapshot.SnapshotId ?? '');
    await claim('from-snapshot', fromSnapshot('restored'));

    const pvc = await bound('from-snapshot');
    const status = await snapshotStatus('restored');
    expect(status).toMatchObject({
      readyToUse: true,
      boundVolumeSnapshotContentName: 'restored',
      restoreSize: '3Gi',
    });
    const volume = await volumeOf(pvc);
    // The snapshot's size beats the smaller request; the class names a key, which wins.
    expect(volume).toMatchObject({
      SnapshotId: snapshot.SnapshotId,
      Size: 3,
      Encrypted: true,
      KmsKeyId: classKey,
      AvailabilityZone: `${testEnv().aws.region}a`,
    });
    expect(driver.provisioned).toContainEqual({
      claim: `${namespace}/from-snapshot`,
      pvName: pvc.spec?.volumeName,
      volumeId: volume.VolumeId,
      snapshotId: snapshot.SnapshotId,
    });
    expect(driver.errors).toEqual([]);
  });

  it('fails a VolumeSnapshot whose snapshot is not in its account and region, and leaves the claim Pending', async () => {
    const west = new EC2Client(awsConfig({ region: OTHER_REGION }));
    const elsewhere = await west.send(
      new CreateVolumeCommand({ AvailabilityZone: `${OTHER_REGION}a`, Size: 1 }),
    );
    const snapshot = await west.send(new CreateSnapshotCommand({ VolumeId: elsewhere.VolumeId }));
    await preProvisioned('elsewhere', snapshot.SnapshotId ?? '');
    await claim('never', fromSnapshot('elsewhere'));

    const status = await waitFor('the VolumeSnapshot to fail', async () => {
      const s = await snapshotStatus('elsewhere');
      return s?.error ? s : undefined;
    });
    expect(status.readyToUse).toBe(false);
    expect(String((status.error as Obj).message)).toContain(`snapshot ${snapshot.SnapshotId} not found`);
    await waitFor('the claim to be seen waiting', async () => driver.waiting.get(`${namespace}/never`));
    expect(driver.waiting.get(`${namespace}/never`)).toContain('VolumeSnapshot');
    const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'never' });
    expect(pvc.status?.phase).toBe('Pending');
    const made = await ec2.send(
      new DescribeVolumesCommand({
        Filters: [{ Name: 'tag:kubernetes.io/created-for/pvc/name', Values: ['never'] }],
      }),
    );
    expect(made.Volumes).toEqual([]);
    expect(driver.errors).toEqual([]);
  });
});
