/**
 * What the cross-account DR volume tests set up: the two places (account A in the environment's
 * region, account B in a second region, reached through a role), a cluster of the test file's
 * own, and the sample application with two EBS-backed claims in its database namespace, one over
 * an in-tree EBS PV (snapshotted natively) and one provisioned by the stand-in EBS CSI driver
 * (snapshotted through CSI), both encrypted with account A's key.
 */
import { CreateVolumeCommand, DescribeVolumesCommand, EC2Client, type Volume } from '@aws-sdk/client-ec2';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll } from 'vitest';
import { assumedRoleCredentials } from '../../../shared/adapters/ebs-snapshot-blocks.js';
import { type ClusterInfo, startCluster, stopCluster } from '../../env/cluster.js';
import { EBS_CSI_DRIVER } from '../../env/ebs-csi-driver.js';
import { installSampleApp, type SampleApp } from '../../fixtures/sample-app.js';
import { installCsiSnapshotApi } from '../../fixtures/volume-snapshot-class-crd.js';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

export const REGION_2 = 'us-west-2';
export const EXTERNAL_ID = 'lifeboat-dr-volumes-test';
export const STORAGE_CLASS = 'ebs-sc';

/** Account B's role the copies and the DR restore's volumes are made through. */
export const drRoleArn = (): string => `arn:aws:iam::${testEnv().aws.accounts.dr}:role/lifeboat-dr`;

/** Client settings of account B in region 2, through its role. */
export function drAws(): {
  endpoint: string;
  region: string;
  credentials: ReturnType<typeof assumedRoleCredentials>;
} {
  const env = testEnv();
  return {
    endpoint: env.aws.endpoint,
    region: REGION_2,
    credentials: assumedRoleCredentials({
      region: REGION_2,
      endpoint: env.aws.endpoint,
      credentials: awsConfig().credentials,
      roleArn: drRoleArn(),
      externalId: EXTERNAL_ID,
    }),
  };
}

/** A new KMS key's ARN, in account A (source) or B (dr, region 2). */
export async function newKey(where: 'source' | 'dr'): Promise<string> {
  const kms = new KMSClient(where === 'source' ? awsConfig() : drAws());
  const made = await kms.send(new CreateKeyCommand({ Description: `lifeboat ${where} volumes` }));
  return made.KeyMetadata?.Arn ?? '';
}

/** The EBS volume of an id in account B, region 2. */
export async function drVolume(volumeId: string): Promise<Volume> {
  const found = await new EC2Client(drAws()).send(new DescribeVolumesCommand({ VolumeIds: [volumeId] }));
  return found.Volumes?.[0] ?? {};
}

/** A cluster of this test file only (cluster-scoped classes of ebs.csi.aws.com change other tests' backups). */
export function useOwnCluster(prefix: string): () => ClusterInfo {
  let cluster: ClusterInfo | undefined;
  beforeAll(async () => {
    const env = testEnv();
    cluster = await startCluster({ name: uniqueName(prefix), rootDir: env.rootDir, tools: env.tools });
  });
  afterAll(async () => {
    if (cluster) await stopCluster(cluster);
  });
  return () => {
    if (!cluster) throw new Error('the cluster is only available inside tests');
    return cluster;
  };
}

/** The snapshot API and a StorageClass of the EBS CSI driver encrypting with `kmsKeyId`. */
export async function installEbsStorage(kc: KubeConfig, options: { kmsKeyId: string }): Promise<void> {
  await installCsiSnapshotApi(kc);
  await kc.makeApiClient(StorageV1Api).createStorageClass({
    body: {
      metadata: { name: STORAGE_CLASS },
      provisioner: EBS_CSI_DRIVER,
      parameters: { type: 'gp3', encrypted: 'true', kmsKeyId: options.kmsKeyId },
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    },
  });
}

export interface VolumeApp {
  readonly app: SampleApp;
  /** The in-tree EBS volume behind the claim `data-native`. */
  readonly nativeVolumeId: string;
}

/**
 * The sample application, and in its database namespace the claims `data-native` (a PV over an
 * EBS volume of account A, in-tree) and `data-csi` (of the driver's class), both bound. The
 * cluster serves the CSI snapshot API with Velero's VolumeSnapshotClass for the driver.
 */
export async function installVolumeApp(
  kc: KubeConfig,
  options: { suffix: string; sourceKey: string },
): Promise<VolumeApp> {
  const core = kc.makeApiClient(CoreV1Api);
  await installEbsStorage(kc, { kmsKeyId: options.sourceKey });
  await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    plural: 'volumesnapshotclasses',
    body: {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: 'ebs-vsc', labels: { 'velero.io/csi-volumesnapshot-class': 'true' } },
      driver: EBS_CSI_DRIVER,
      deletionPolicy: 'Delete',
    },
  });
  const app = await installSampleApp(kc, options.suffix);
  const namespace = app.namespaces.db;
  const zone = `${testEnv().aws.region}a`;
  const made = await new EC2Client(awsConfig()).send(
    new CreateVolumeCommand({
      AvailabilityZone: zone,
      Size: 4,
      VolumeType: 'gp3',
      Encrypted: true,
      KmsKeyId: options.sourceKey,
    }),
  );
  const nativeVolumeId = made.VolumeId ?? '';
  const pvName = uniqueName('pv-native');
  await core.createPersistentVolume({
    body: {
      metadata: { name: pvName, labels: { app: 'db' } },
      spec: {
        capacity: { storage: '4Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        claimRef: { namespace, name: 'data-native' },
        awsElasticBlockStore: { volumeID: `aws://${zone}/${nativeVolumeId}`, fsType: 'ext4' },
      },
    },
  });
  const claim = (name: string, spec: Record<string, unknown>) =>
    core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name, labels: { app: 'db' } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '4Gi' } }, ...spec },
      },
    });
  await claim('data-native', { storageClassName: '', volumeName: pvName });
  await claim('data-csi', { storageClassName: STORAGE_CLASS });
  for (const name of ['data-native', 'data-csi'])
    await waitFor(`claim ${name} to bind`, async () => {
      const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace, name });
      return pvc.status?.phase === 'Bound';
    });
  return { app, nativeVolumeId };
}
