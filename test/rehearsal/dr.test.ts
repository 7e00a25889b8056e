/**
 * The cross-account DR rehearsal: two stacks from their synthesized cloud assemblies, the source
 * stack in account A region 1 naming account B region 2 as a DR target, and the DR stack in
 * account B region 2 naming the source's bucket and key, each with its own cluster. A backup the
 * source's workflow made is listed by the DR stack's API and restored by the DR stack's own restore
 * state machine into the DR cluster, every call of the DR functions made with their own roles and
 * evaluated across the accounts (the DR role's identity policy and A's bucket or key policy must
 * both allow). The DR stack writes nothing into A's bucket, a deliberate write is refused, and the
 * source stack without drTargets leaves the DR restore failing with an access-denied naming the
 * bucket. Volumes cross too: A's backup workflow snapshots an in-tree EBS volume and a CSI claim
 * and, with `copySnapshots`, its VolumeOperations function (its own role: sharing with B only,
 * granting B use of A's key, assuming B's copy role) copies them into B's region 2 under B's key;
 * B's restore state machine binds both claims to volumes made from the copies, B's drill state
 * machine drills the backup (RPO, RTO, no mismatch), and without copies B's restore is
 * PartiallyFailed naming each volume. Every IAM violation recorded fails its test.
 */
import {
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EC2Client,
  ModifySnapshotAttributeCommand,
  type Volume,
} from '@aws-sdk/client-ec2';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupKeys, restoreKeys } from '../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo, SnapshotCopyInfo } from '../../shared/domain/volumes/info-shapes.js';
import { type EbsCsiDriver, startEbsCsiDriver } from '../env/ebs-csi-driver.js';
import {
  drAws,
  drVolume,
  installEbsStorage,
  installVolumeApp,
  newKey,
  type VolumeApp,
} from '../integration/dr/dr-volumes-support.js';
import { awsConfig, testEnv, uniqueName } from '../integration/support/env.js';
import { waitFor } from '../integration/support/wait.js';
import {
  bucketKeyArn,
  COPY_EXTERNAL_ID,
  COPY_ROLE_ARN,
  DR_CLUSTERS,
  DR_REGION,
  drAssembly,
  drTarget,
  plainSourceAssembly,
  SOURCE_REGION,
  sourceAssemblyNaming,
  updatedTo,
} from './dr-stacks.js';
import { adoptCopyRole, gzippedJson } from './dr-volumes.js';
import type { Decision } from './iam.js';
import { type Rehearsal, startRehearsal } from './rehearsal.js';

const LONG = 900_000;
const [DR_CLUSTER = 'dr'] = DR_CLUSTERS;

describe('the two-account DR rehearsal: a source stack in A/region 1, a DR stack in B/region 2', () => {
  let source: Rehearsal;
  let dr: Rehearsal;
  let namespace: string;
  let disposeDrAssembly: (() => Promise<void>) | undefined;
  let disposeSourceAssembly: (() => Promise<void>) | undefined;
  /** The customer key the source's volumes are encrypted with (named in its snapshotKeys). */
  let sourceKey: string;
  const backupName = uniqueName('dr-source');
  const restoreName = uniqueName('dr-restore');

  /** The test's own S3 client (outside the rehearsal's roles). */
  function s3(region: string): S3Client {
    const env = testEnv();
    return new S3Client({
      endpoint: env.aws.endpoint,
      region,
      forcePathStyle: true,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
  }

  /** The DR deployment's calls on the source bucket (its objects or the bucket itself). */
  const onSourceBucket = (d: Decision) =>
    d.call.resources.some(
      (r) => r === `arn:aws:s3:::${source.bucket}` || r.startsWith(`arn:aws:s3:::${source.bucket}/`),
    );

  beforeAll(async () => {
    const env = testEnv();
    sourceKey = await newKey('source');
    const sourceSynthesized = await sourceAssemblyNaming(sourceKey);
    disposeSourceAssembly = sourceSynthesized.dispose;
    source = await startRehearsal({ tools: env.tools, aws: env.aws, assembly: sourceSynthesized.assembly });
    const location = { bucket: source.bucket, keyArn: bucketKeyArn(source.deployment, source.bucket) };
    const synthesized = await drAssembly(location);
    disposeDrAssembly = synthesized.dispose;
    dr = await startRehearsal({
      tools: env.tools,
      aws: env.aws,
      assembly: synthesized.assembly,
      target: await drTarget(env.aws.endpoint),
      clusterName: DR_CLUSTER,
      trusts: [source.deployment],
    });
    namespace = uniqueName('dr-app');
    const core = source.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    for (const name of ['one', 'two'])
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { name } } });
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'credentials' }, stringData: { password: 'kept-in-the-source' } },
    });
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'worker' } } });
  }, LONG);
  afterAll(async () => {
    await dr?.stop();
    await source?.stop();
    await disposeDrAssembly?.();
    await disposeSourceAssembly?.();
  });

  it('deploys the source in account A region 1 and the DR stack in account B region 2', () => {
    const env = testEnv();
    expect(source.deployment.target).toMatchObject({
      account: env.aws.accounts.source,
      region: SOURCE_REGION,
    });
    expect(dr.deployment.target).toMatchObject({ account: env.aws.accounts.dr, region: DR_REGION });
    const restoreFunction = dr.lambda.functionNamed('Lifeboat-PlanRestore');
    expect(restoreFunction.roleArn).toMatch(new RegExp(`^arn:aws:iam::${env.aws.accounts.dr}:role/`));
    expect(restoreFunction.environment).toMatchObject({
      LIFEBOAT_DR_SOURCE_BUCKET: source.bucket,
      LIFEBOAT_DR_SOURCE_REGION: SOURCE_REGION,
    });
    expect(dr.bucket).not.toBe(source.bucket);
  });

  it('backs up in account A with the source stack’s own workflow', { timeout: LONG }, async () => {
    const outcome = await source.start('backup', {
      request: {
        cluster: 'rehearsal',
        backup: { metadata: { name: backupName }, spec: { includedNamespaces: [namespace] } },
      },
    });
    expect(outcome).toMatchObject({ status: 'SUCCEEDED', output: { name: backupName, phase: 'Completed' } });
    expect(source.report().violations).toEqual([]);
  });

  it('lists the source’s backups through the DR stack’s API, as location dr', { timeout: LONG }, async () => {
    const listed = await dr.api({ method: 'GET', path: '/backups?location=dr' });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const items = (
      listed.body as { items: { metadata: { name: string; labels?: Record<string, string> } }[] }
    ).items;
    const found = items.find((b) => b.metadata.name === backupName);
    expect(found?.metadata.labels?.['velero.io/storage-location']).toBe('dr');
    // The DR stack's own location holds no backup of the source.
    const own = await dr.api({ method: 'GET', path: '/backups' });
    expect(
      (own.body as { items: { metadata: { name: string } }[] }).items.map((b) => b.metadata.name),
    ).not.toContain(backupName);
    expect(dr.report().violations).toEqual([]);
  });

  it('restores it with the DR stack’s restore state machine into the DR cluster, reading A’s bucket with B’s roles', {
    timeout: LONG,
  }, async () => {
    const outcome = await dr.start('restore', {
      request: {
        cluster: DR_CLUSTER,
        restore: { metadata: { name: restoreName }, spec: { backupName } },
      },
    });
    expect(outcome, JSON.stringify(outcome)).toMatchObject({
      status: 'SUCCEEDED',
      output: { phase: 'Completed', errors: 0 },
    });
    const core = dr.kubeConfig.makeApiClient(CoreV1Api);
    const configMaps = await core.listNamespacedConfigMap({ namespace });
    for (const name of ['one', 'two'])
      expect(configMaps.items.find((c) => c.metadata?.name === name)?.data).toEqual({ name });
    const secret = await core.readNamespacedSecret({ namespace, name: 'credentials' });
    expect(Buffer.from(secret.data?.password ?? '', 'base64').toString('utf8')).toBe('kept-in-the-source');
    expect((await core.readNamespacedServiceAccount({ namespace, name: 'worker' })).metadata?.name).toBe(
      'worker',
    );
    // Not in the source cluster's stead: the source's namespace is untouched there, and the DR
    // cluster is another control plane.
    expect(dr.cluster.server).not.toBe(source.cluster.server);
    expect(dr.report().violations).toEqual([]);
    // The reads crossed the accounts: B's roles read A's objects, decrypted with A's key through S3.
    const drAccount = testEnv().aws.accounts.dr;
    const crossed = dr.iam.decisions.filter((d) => d.allowed && onSourceBucket(d));
    expect(crossed.map((d) => d.call.action)).toContain('s3:GetObject');
    expect(crossed.every((d) => d.call.principal.startsWith(`arn:aws:iam::${drAccount}:role/`))).toBe(true);
    const sourceBucketKey = bucketKeyArn(source.deployment, source.bucket);
    expect(
      dr.iam.decisions.some(
        (d) => d.allowed && d.call.action === 'kms:Decrypt' && d.call.resources.includes(sourceBucketKey),
      ),
    ).toBe(true);
    // The restore's own files went to the DR stack's bucket, in region 2.
    const record = await s3(DR_REGION).send(
      new GetObjectCommand({ Bucket: dr.bucket, Key: `plugins/lifeboat/restores/${restoreName}.json` }),
    );
    expect(JSON.parse(await (record.Body?.transformToString() ?? '{}'))).toMatchObject({
      status: { phase: 'Completed' },
    });
  });

  it('writes nothing into A’s bucket, and a deliberate write by a DR role is refused', {
    timeout: LONG,
  }, async () => {
    const writes = dr.iam.decisions.filter(
      (d) => onSourceBucket(d) && /^s3:(Put|Delete|Abort|Restore|Replicate)/i.test(d.call.action),
    );
    expect(writes.map((d) => `${d.call.caller} ${d.call.action}`)).toEqual([]);
    expect(
      await s3(SOURCE_REGION)
        .send(
          new HeadObjectCommand({
            Bucket: source.bucket,
            Key: `plugins/lifeboat/restores/${restoreName}.json`,
          }),
        )
        .then(
          () => 'present',
          () => 'absent',
        ),
    ).toBe('absent');
    // PlanRestore's role, which reads the source, tries to write a backup file there.
    const fn = dr.lambda.functionNamed('Lifeboat-PlanRestore');
    const credentials = await dr.deployment.assume({ roleArn: fn.roleArn, caller: 'deliberate-write' });
    const asDrRole = new S3Client({
      endpoint: dr.gateway,
      region: SOURCE_REGION,
      forcePathStyle: true,
      credentials,
    });
    const key = `backups/${backupName}/planted.json`;
    await expect(
      asDrRole.send(new PutObjectCommand({ Bucket: source.bucket, Key: key, Body: '{}' })),
      // S3 answers another account's refused request with a bare AccessDenied, as AWS does.
    ).rejects.toMatchObject({ name: 'AccessDenied', message: 'Access Denied' });
    expect(dr.report().violations).toEqual([
      expect.stringMatching(
        new RegExp(`^deliberate-write .*s3:PutObject on arn:aws:s3:::${source.bucket}/${key}`),
      ),
    ]);
    expect(
      await s3(SOURCE_REGION)
        .send(new HeadObjectCommand({ Bucket: source.bucket, Key: key }))
        .then(
          () => 'present',
          () => 'absent',
        ),
    ).toBe('absent');
  });

  it('fails the DR restore with an access-denied naming the bucket once the source stack has no drTargets', {
    timeout: LONG,
  }, async () => {
    const before = dr.report().violations.length;
    // `cdk deploy` of the source stack without drTargets: the same bucket and keys, its policies.
    dr.iam.trust(updatedTo(source.deployment, await plainSourceAssembly()));
    try {
      const name = uniqueName('dr-refused');
      const outcome = await dr.start('restore', {
        request: {
          cluster: DR_CLUSTER,
          restore: {
            metadata: { name },
            spec: { backupName, namespaceMapping: { [namespace]: uniqueName('dr-no') } },
          },
        },
      });
      // AWS's own answer names no bucket across accounts: the restore's error does.
      expect(outcome, JSON.stringify(outcome)).toMatchObject({
        status: 'FAILED',
        error: 'CloudRequestRefused',
      });
      expect(outcome.cause).toMatch(new RegExp(`bucket ${source.bucket}: .*AccessDenied`));
      const refused = dr.report().violations.slice(before);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.every((v) => v.includes(`arn:aws:s3:::${source.bucket}`))).toBe(true);
    } finally {
      dr.iam.trust(source.deployment);
    }
  });

  describe('volumes across the accounts: copied by A’s VolumeOperations, restored and drilled by B', () => {
    const drivers: EbsCsiDriver[] = [];
    const copiedBackup = uniqueName('dr-volumes');
    let volumeApp: VolumeApp;
    let drKey: string;
    let volumeOperationsRole: string;
    const claims = ['data-native', 'data-csi'];

    /** Source namespace → a target one per case, so the cases share the DR cluster. */
    const mappingTo = (suffix: string): Record<string, string> =>
      Object.fromEntries(Object.values(volumeApp.app.namespaces).map((ns) => [ns, `${ns}-${suffix}`]));
    const dbIn = (mapping: Record<string, string>): string => mapping[volumeApp.app.namespaces.db] ?? '';

    /** A backup of the volume application by A's backup workflow, Completed. */
    const backUp = async (name: string, spec: Record<string, unknown>): Promise<void> => {
      const outcome = await source.start('backup', {
        request: {
          cluster: 'rehearsal',
          backup: {
            metadata: { name },
            spec: { includedNamespaces: Object.values(volumeApp.app.namespaces), ...spec },
          },
        },
      });
      const why = JSON.stringify({ outcome, violations: source.report().violations });
      expect(outcome, why).toMatchObject({
        status: 'SUCCEEDED',
        output: { name, phase: 'Completed', errors: 0 },
      });
    };

    /** A backup's volumes-info, from A's bucket. */
    const volumeInfo = (name: string): Promise<BackupVolumeInfo[]> =>
      gzippedJson({
        endpoint: testEnv().aws.endpoint,
        region: SOURCE_REGION,
        bucket: source.bucket,
        key: backupKeys(name).volumeInfo,
      });

    /** The copy of each claim's snapshot, by claim. */
    const copies = async (): Promise<Record<string, SnapshotCopyInfo | undefined>> =>
      Object.fromEntries(
        (await volumeInfo(copiedBackup)).map((i) => [i.pvcName ?? '', i.snapshotCopies?.[0]]),
      );

    /** The volume behind a claim of the DR cluster, once bound, as account B sees it. */
    const boundVolume = async (namespace: string, name: string): Promise<Volume> => {
      const core = dr.kubeConfig.makeApiClient(CoreV1Api);
      const pvc = await waitFor(`claim ${namespace}/${name} to bind in the DR cluster`, async () => {
        const found = await core.readNamespacedPersistentVolumeClaim({ namespace, name });
        return found.status?.phase === 'Bound' ? found : undefined;
      });
      const pv = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
      const id =
        pv.spec?.csi?.volumeHandle ??
        /vol-[0-9a-f]+/.exec(pv.spec?.awsElasticBlockStore?.volumeID ?? '')?.[0];
      return drVolume(id ?? 'missing');
    };

    /** Every claim bound to a volume of B in region 2, made from its copy, under B's key. */
    const expectVolumesFromCopies = async (namespace: string): Promise<void> => {
      const copyOf = await copies();
      for (const claim of claims)
        expect(await boundVolume(namespace, claim), claim).toMatchObject({
          SnapshotId: copyOf[claim]?.snapshotHandle,
          AvailabilityZone: `${DR_REGION}a`,
          Encrypted: true,
          KmsKeyId: drKey,
        });
    };

    beforeAll(async () => {
      const env = testEnv();
      drKey = await newKey('dr');
      volumeOperationsRole = source.lambda.functionNamed('Lifeboat-VolumeOperations').roleArn;
      await adoptCopyRole({ source, endpoint: env.aws.endpoint, drKeyArn: drKey });
      // The clusters' EBS CSI drivers: A's in region 1, B's in region 2 (not Lifeboat's calls).
      drivers.push(
        startEbsCsiDriver({
          kubeconfig: source.cluster.kubeconfig,
          aws: { endpoint: env.aws.endpoint, region: SOURCE_REGION, credentials: awsConfig().credentials },
        }),
        startEbsCsiDriver({ kubeconfig: dr.cluster.kubeconfig, aws: drAws() }),
      );
      volumeApp = await installVolumeApp(source.kubeConfig, { suffix: uniqueName('rv'), sourceKey });
      await installEbsStorage(dr.kubeConfig, { kmsKeyId: drKey });
    }, LONG);
    afterAll(async () => {
      for (const driver of drivers) await driver.stop();
    });

    it('backs up in A with copySnapshots to B, region 2: VolumeOperations shares, grants and copies through B’s role', {
      timeout: LONG,
    }, async () => {
      const drAccount = testEnv().aws.accounts.dr;
      const target = { account: drAccount, region: DR_REGION, kmsKeyId: drKey };
      const copyTarget = { ...target, roleArn: COPY_ROLE_ARN, externalId: COPY_EXTERNAL_ID };
      await backUp(copiedBackup, { copySnapshots: [copyTarget] });
      expect(source.report().violations).toEqual([]);
      const copyOf = await copies();
      expect(Object.keys(copyOf).sort()).toEqual([...claims].sort());
      for (const claim of claims) {
        const copy = copyOf[claim];
        expect(copy, claim).toMatchObject({ ...target, Phase: 'Completed' });
        const seen = await new EC2Client(drAws()).send(
          new DescribeSnapshotsCommand({ SnapshotIds: [copy?.snapshotHandle ?? 'missing'] }),
        );
        expect(seen.Snapshots?.[0], claim).toMatchObject({
          OwnerId: drAccount,
          State: 'completed',
          Encrypted: true,
          KmsKeyId: drKey,
        });
      }
      // IAM allowed exactly this: VolumeOperations' own role shared each snapshot with B only,
      // granted B use of A's key and assumed B's copy role; the copies were made with that role.
      const allowed = (action: string) =>
        source.iam.decisions.filter((d) => d.allowed && d.call.action === action).map((d) => d.call);
      const shared = new Set(allowed('ec2:ModifySnapshotAttribute').flatMap((c) => c.resources));
      expect([...shared].sort()).toEqual(
        claims.map((c) => `arn:aws:ec2:${SOURCE_REGION}::snapshot/${copyOf[c]?.sourceSnapshotHandle}`).sort(),
      );
      for (const call of allowed('ec2:ModifySnapshotAttribute'))
        expect(call).toMatchObject({
          principal: volumeOperationsRole,
          context: { 'ec2:Add/userId': [drAccount] },
        });
      expect(allowed('kms:CreateGrant').length).toBeGreaterThan(0);
      for (const call of allowed('kms:CreateGrant'))
        expect(call).toMatchObject({
          principal: volumeOperationsRole,
          resources: [sourceKey],
          context: { 'kms:GranteePrincipal': `arn:aws:iam::${drAccount}:root` },
        });
      const assumed = allowed('sts:AssumeRole').filter((c) => c.resources.includes(COPY_ROLE_ARN));
      expect(assumed.length).toBeGreaterThan(0);
      expect(assumed.every((c) => c.principal === volumeOperationsRole)).toBe(true);
      const copied = allowed('ec2:CopySnapshot');
      expect(copied.length).toBeGreaterThanOrEqual(claims.length);
      expect(copied.every((c) => c.principal === COPY_ROLE_ARN)).toBe(true);
      // The same role sharing with any other account is refused.
      const credentials = await source.deployment.assume({
        roleArn: volumeOperationsRole,
        caller: 'deliberate-share',
      });
      const asVolumeOperations = new EC2Client({
        endpoint: source.gateway,
        region: SOURCE_REGION,
        credentials,
      });
      const snapshotId = copyOf['data-native']?.sourceSnapshotHandle ?? 'missing';
      await expect(
        asVolumeOperations.send(
          new ModifySnapshotAttributeCommand({
            SnapshotId: snapshotId,
            Attribute: 'createVolumePermission',
            OperationType: 'add',
            UserIds: ['333333333333'],
          }),
        ),
      ).rejects.toThrow();
      expect(source.report().violations).toEqual([
        expect.stringMatching(
          /^deliberate-share .*ec2:ModifySnapshotAttribute on arn:aws:ec2:us-east-1::snapshot\/snap-/,
        ),
      ]);
    });

    it('restores with B’s restore state machine: each claim bound to a volume of its copy in B, region 2, under B’s key', {
      timeout: LONG,
    }, async () => {
      const before = dr.report().violations.length;
      const mapping = mappingTo('r');
      const name = uniqueName('dr-volumes-restore');
      const outcome = await dr.start('restore', {
        request: {
          cluster: DR_CLUSTER,
          restore: { metadata: { name }, spec: { backupName: copiedBackup, namespaceMapping: mapping } },
        },
      });
      expect(outcome, JSON.stringify(outcome)).toMatchObject({
        status: 'SUCCEEDED',
        output: { phase: 'Completed', errors: 0 },
      });
      await expectVolumesFromCopies(dbIn(mapping));
      expect(dr.report().violations.slice(before)).toEqual([]);
      for (const driver of drivers) expect(driver.errors).toEqual([]);
    });

    it('drills the backup with B’s drill state machine: Completed, RPO and RTO, no mismatch, both volumes', {
      timeout: LONG,
    }, async () => {
      const before = dr.report().violations.length;
      const mapping = mappingTo('d');
      const name = uniqueName('dr-drill');
      const started = await dr.api({
        method: 'POST',
        path: '/drills',
        body: {
          cluster: DR_CLUSTER,
          drill: {
            metadata: { name },
            spec: { backupName: copiedBackup, namespaceMapping: mapping, readyTimeout: '3m' },
          },
        },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      await dr.settled();
      const stored = await s3(DR_REGION).send(
        new GetObjectCommand({ Bucket: dr.bucket, Key: `plugins/lifeboat/drills/${name}.json` }),
      );
      const report = JSON.parse(await (stored.Body?.transformToString() ?? '{}')) as {
        phase: string;
        mismatches: unknown[];
        rpoSeconds?: number;
        rtoSeconds?: number;
        failureReason?: string;
        volumes: { pvc: string }[];
      };
      expect(report.mismatches).toEqual([]);
      expect(report.failureReason).toBeUndefined();
      expect(report).toMatchObject({
        phase: 'Completed',
        backup: { name: copiedBackup },
        restore: { phase: 'Completed' },
      });
      expect(report.rpoSeconds).toEqual(expect.any(Number));
      expect(report.rtoSeconds).toEqual(expect.any(Number));
      expect(report.volumes.map((v) => v.pvc).sort()).toEqual(
        claims.map((c) => `${dbIn(mapping)}/${c}`).sort(),
      );
      await expectVolumesFromCopies(dbIn(mapping));
      expect(dr.report().violations.slice(before)).toEqual([]);
    });

    it('without copySnapshots, B’s restore is PartiallyFailed naming each volume and why, with the rest restored', {
      timeout: LONG,
    }, async () => {
      const plainBackup = uniqueName('dr-no-copies');
      const sourceBefore = source.report().violations.length;
      await backUp(plainBackup, {});
      expect(source.report().violations.slice(sourceBefore)).toEqual([]);
      const before = dr.report().violations.length;
      const mapping = mappingTo('n');
      const name = uniqueName('dr-no-copies');
      const outcome = await dr.start('restore', {
        request: {
          cluster: DR_CLUSTER,
          restore: { metadata: { name }, spec: { backupName: plainBackup, namespaceMapping: mapping } },
        },
      });
      expect(outcome, JSON.stringify(outcome)).toMatchObject({
        status: 'SUCCEEDED',
        output: { phase: 'PartiallyFailed' },
      });
      const results = await gzippedJson<{
        errors: { cluster?: string[]; namespaces?: Record<string, string[]> };
      }>({
        endpoint: testEnv().aws.endpoint,
        region: DR_REGION,
        bucket: dr.bucket,
        key: restoreKeys(name).results,
      });
      const infos = await volumeInfo(plainBackup);
      const info = (claim: string) => infos.find((i) => i.pvcName === claim);
      const why = `stays in the backup's account and region, and the backup has no copy in account ${testEnv().aws.accounts.dr} region ${DR_REGION} (copySnapshots)`;
      const nativePv = info('data-native')?.pvName ?? '';
      const db = dbIn(mapping);
      expect(results.errors.cluster).toEqual([
        `PersistentVolume ${nativePv}: Persistent volume ${nativePv} is not restored: its native snapshot ${info('data-native')?.nativeSnapshotInfo?.snapshotHandle} ${why}`,
      ]);
      expect(results.errors.namespaces).toEqual({
        [db]: [
          `PersistentVolumeClaim data-csi: PersistentVolumeClaim data-csi is not restored: its CSI snapshot ${info('data-csi')?.csiSnapshotInfo?.snapshotHandle} ${why}`,
        ],
      });
      // Everything else came back; no volume was made for either claim.
      const apps = dr.kubeConfig.makeApiClient(AppsV1Api);
      const shop = mapping[volumeApp.app.namespaces.shop] ?? '';
      for (const [namespace, app] of [
        [shop, 'web'],
        [db, 'db'],
      ] as const) {
        expect((await apps.readNamespacedDeployment({ namespace, name: app })).metadata?.name).toBe(app);
        const core = dr.kubeConfig.makeApiClient(CoreV1Api);
        await core.readNamespacedConfigMap({ namespace, name: `${app}-config` });
        await core.readNamespacedSecret({ namespace, name: `${app}-secret` });
      }
      const made = await new EC2Client(drAws()).send(
        new DescribeVolumesCommand({ Filters: [{ Name: 'tag:velero.io/restore', Values: [name] }] }),
      );
      expect(made.Volumes).toEqual([]);
      expect(dr.report().violations.slice(before)).toEqual([]);
    });
  });
});
