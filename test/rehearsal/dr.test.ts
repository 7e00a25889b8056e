/**
 * The cross-account DR rehearsal: two stacks from their synthesized cloud assemblies, the source
 * stack in account A region 1 naming account B region 2 as a DR target, and the DR stack in
 * account B region 2 naming the source's bucket and key, each with its own cluster. A backup the
 * source's workflow made is listed by the DR stack's API and restored by the DR stack's own restore
 * state machine into the DR cluster, every call of the DR functions made with their own roles and
 * evaluated across the accounts (the DR role's identity policy and A's bucket or key policy must
 * both allow). The DR stack writes nothing into A's bucket, a deliberate write is refused, and the
 * source stack without drTargets leaves the DR restore failing with an access-denied naming the
 * bucket.
 */
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEnv, uniqueName } from '../integration/support/env.js';
import {
  bucketKeyArn,
  DR_CLUSTERS,
  DR_REGION,
  drAssembly,
  drTarget,
  nameSourceLocation,
  plainSourceAssembly,
  SOURCE_REGION,
  sourceAssembly,
  updatedTo,
} from './dr-stacks.js';
import type { Decision } from './iam.js';
import { type Rehearsal, startRehearsal } from './rehearsal.js';

const LONG = 900_000;
const [DR_CLUSTER = 'dr'] = DR_CLUSTERS;

describe('the two-account DR rehearsal: a source stack in A/region 1, a DR stack in B/region 2', () => {
  let source: Rehearsal;
  let dr: Rehearsal;
  let namespace: string;
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
    source = await startRehearsal({ tools: env.tools, aws: env.aws, assembly: await sourceAssembly() });
    const location = { bucket: source.bucket, keyArn: bucketKeyArn(source.deployment, source.bucket) };
    dr = await startRehearsal({
      tools: env.tools,
      aws: env.aws,
      assembly: nameSourceLocation(await drAssembly(), location),
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
    const sourceKey = bucketKeyArn(source.deployment, source.bucket);
    expect(
      dr.iam.decisions.some(
        (d) => d.allowed && d.call.action === 'kms:Decrypt' && d.call.resources.includes(sourceKey),
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
});
