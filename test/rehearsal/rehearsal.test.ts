/**
 * The deployment rehearsal, end to end: from the synthesized cloud assembly alone (every function
 * from its CDK bundle with the template's environment and role, the state machines as rendered,
 * the SQS mappings, the Fargate tasks, EKS access entries and Lifeboat's RBAC manifest), a backup
 * of the sample application — its CRD, an EBS-backed PVC snapshotted natively, a pod backup hook —
 * ends Completed, and its restore after the application is deleted brings every object back,
 * equal to the source. Every AWS call is allowed by its caller's role in the template.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeSnapshotsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { GetScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEnv, uniqueName } from '../integration/support/env.js';
import { waitFor } from '../integration/support/wait.js';
import { type Rehearsal, startRehearsal } from './rehearsal.js';
import {
  capture,
  deleteWorkload,
  hookRan,
  installWorkload,
  longHookRan,
  namespaceForPods,
  provisionCache,
  type Workload,
  ZONE,
} from './sample.js';
import type { Json } from './template.js';

const LONG = 600_000;

describe('the deployment rehearsal of a backup and a restore', () => {
  let rehearsal: Rehearsal;
  let workload: Workload;
  let source: Map<string, unknown>;
  const backupName = uniqueName('rehearsed');
  const restoreName = uniqueName('rehearsed-restore');

  /** The stack's bucket, read as the test's own caller (outside the rehearsal's roles). */
  function bucket(): S3Client {
    const env = testEnv();
    return new S3Client({
      endpoint: env.aws.endpoint,
      region: env.aws.region,
      forcePathStyle: true,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
  }

  /** Keys left under a prefix of the stack's bucket. */
  async function keysUnder(prefix: string): Promise<string[]> {
    const listed = await bucket().send(
      new ListObjectsV2Command({ Bucket: rehearsal.bucket, Prefix: prefix }),
    );
    return (listed.Contents ?? []).map((o) => o.Key ?? '');
  }

  /** A stored JSON document of the stack's bucket. */
  async function storedJson<T>(key: string): Promise<T> {
    const stored = await bucket().send(new GetObjectCommand({ Bucket: rehearsal.bucket, Key: key }));
    return JSON.parse(await (stored.Body?.transformToString() ?? '{}')) as T;
  }

  beforeAll(async () => {
    const env = testEnv();
    rehearsal = await startRehearsal({ tools: env.tools, aws: env.aws });
    workload = await installWorkload({
      kc: rehearsal.kubeConfig,
      cluster: rehearsal.cluster,
      aws: env.aws,
      suffix: backupName.slice(-8),
    });
    source = await capture(rehearsal.kubeConfig, workload);
  }, LONG);
  afterAll(async () => {
    if (rehearsal) {
      // The report of what each role was granted and no call of the rehearsal used.
      const lines = [...rehearsal.report().unusedPermissions].map(
        ([role, actions]) =>
          `  ${role
            .split('/')
            .pop()
            ?.replace(/-[0-9a-f]{6}$/, '')}: ${actions.join(', ')}`,
      );
      process.stdout.write(`\nPermissions granted and not used by the rehearsal:\n${lines.join('\n')}\n`);
    }
    await rehearsal?.stop();
  });

  it('backs up the sample application to Completed, running its hooks (one in the Fargate hook runner) and snapshotting its EBS volume', {
    timeout: LONG,
  }, async () => {
    const outcome = await rehearsal.start('backup', {
      request: {
        cluster: 'rehearsal',
        backup: {
          apiVersion: 'velero.io/v1',
          kind: 'Backup',
          metadata: { name: backupName },
          spec: { includedNamespaces: [...workload.namespaces], snapshotVolumes: true },
        },
      },
    });
    expect(outcome).toMatchObject({
      status: 'SUCCEEDED',
      output: { name: backupName, phase: 'Completed', errors: 0 },
    });
    expect(hookRan(workload)).toBe(true);
    // The Fargate hook runner, from the image recipe, with its own role and access entry.
    expect(longHookRan(workload)).toBe(true);
    expect(rehearsal.report().usage.fargate.tasks).toBeGreaterThan(0);
    // The run's working data (Secret copies among it) went with the run.
    expect(await keysUnder(`plugins/lifeboat/work/backups/${backupName}/`)).toEqual([]);
    expect((await keysUnder(`backups/${backupName}/`)).length).toBeGreaterThan(5);
    const env = testEnv();
    const ec2 = new EC2Client({
      endpoint: env.aws.endpoint,
      region: env.aws.region,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    const { Snapshots } = await ec2.send(
      new DescribeSnapshotsCommand({ Filters: [{ Name: 'tag:velero.io/backup', Values: [backupName] }] }),
    );
    expect(Snapshots?.map((s) => s.VolumeId)).toEqual([workload.volumeId]);
    expect(rehearsal.report().violations).toEqual([]);
  });

  it('restores every object of the application after it is deleted, equal to the source', {
    timeout: LONG,
  }, async () => {
    await deleteWorkload(rehearsal.kubeConfig, workload);
    const provisioned = await provisionCache(rehearsal.kubeConfig, workload);
    const outcome = await rehearsal.start('restore', {
      request: {
        cluster: 'rehearsal',
        restore: {
          apiVersion: 'velero.io/v1',
          kind: 'Restore',
          metadata: { name: restoreName },
          spec: { backupName, volumeAvailabilityZone: ZONE },
        },
      },
    });
    expect(outcome).toMatchObject({ status: 'SUCCEEDED', output: { phase: 'Completed', errors: 0 } });
    const core = rehearsal.kubeConfig.makeApiClient(CoreV1Api);
    const claim = await waitFor('the restored claim to bind', async () => {
      const pvc = await core.readNamespacedPersistentVolumeClaim({
        namespace: workload.app.namespaces.db,
        name: 'db-data',
      });
      return pvc.status?.phase === 'Bound' ? pvc : undefined;
    });
    const pv = await core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
    // A new volume, made from the backup's snapshot.
    expect(pv.spec?.csi?.volumeHandle).toMatch(/^vol-/);
    expect(pv.spec?.csi?.volumeHandle).not.toBe(workload.volumeId);
    // The re-provisioned claim's new volume got the backed-up reclaim policy and labels.
    const cache = await core.readPersistentVolume({ name: provisioned });
    expect(cache.spec?.claimRef?.name).toBe('cache');
    expect(cache.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
    expect(cache.metadata?.labels).toEqual({ tier: 'cache' });
    const restored = await capture(rehearsal.kubeConfig, workload);
    const missing = [...source.keys()].filter((k) => !restored.has(k));
    expect(missing).toEqual([]);
    for (const [id, data] of source)
      if (data !== null) expect({ id, data: restored.get(id) }).toEqual({ id, data });
    expect(rehearsal.report().violations).toEqual([]);
    expect(rehearsal.report().pollerErrors).toEqual([]);
    expect(await keysUnder(`plugins/lifeboat/work/restores/${restoreName}/`)).toEqual([]);
  });

  const recipe: Json = {
    inline: {
      groups: [
        { name: 'settings', includedResourceTypes: ['configmaps'] },
        { name: 'the-rest', excludedResourceTypes: ['configmaps', 'events'] },
      ],
      hooks: [
        {
          name: 'checkpoint',
          labelSelector: { matchLabels: { component: 'agent' } },
          singlePodOnly: true,
          commands: [['/bin/sh', '-c', 'echo checkpoint >> recipe-marker']],
          timeout: 30,
          waitTimeout: '2m',
        },
      ],
      workflows: {
        backup: [{ hook: 'checkpoint' }, { group: 'settings' }, { group: 'the-rest' }],
        restore: [{ group: 'settings' }, { group: 'the-rest' }, { hook: 'checkpoint' }],
      },
    },
  };

  it('backs up and restores along a recipe: its group steps in order and its hook at each end', {
    timeout: LONG,
  }, async () => {
    const core = rehearsal.kubeConfig.makeApiClient(CoreV1Api);
    const namespace = await namespaceForPods(core, 'recipe');
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { level: 'high' } },
    });
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'agent', labels: { component: 'agent' } },
        spec: { containers: [{ name: 'main', image: 'agent:1' }] },
      },
    });
    await waitFor('the agent to run', async () =>
      (await core.readNamespacedPod({ namespace, name: 'agent' })).status?.phase === 'Running'
        ? true
        : undefined,
    );
    const name = uniqueName('recipe-backup');
    const backedUp = await rehearsal.start('backup', {
      request: {
        cluster: 'rehearsal',
        backup: { metadata: { name }, spec: { includedNamespaces: [namespace], recipe } },
      },
    });
    expect(backedUp).toMatchObject({ status: 'SUCCEEDED', output: { phase: 'Completed', errors: 0 } });
    const marker = join(rehearsal.cluster.execDir, namespace, 'agent', 'recipe-marker');
    expect(existsSync(marker)).toBe(true);
    await core.deleteNamespace({ name: namespace });
    await waitFor(`namespace ${namespace} to be gone`, async () => {
      for (const pod of (await core.listNamespacedPod({ namespace })).items)
        await core
          .deleteNamespacedPod({ namespace, name: pod.metadata?.name ?? '', gracePeriodSeconds: 0 })
          .catch(() => undefined);
      return core.readNamespace({ name: namespace }).then(
        () => undefined,
        () => true,
      );
    });
    const restored = await rehearsal.start('restore', {
      request: {
        cluster: 'rehearsal',
        restore: { metadata: { name: uniqueName('recipe-restore') }, spec: { backupName: name, recipe } },
      },
    });
    expect(restored).toMatchObject({ status: 'SUCCEEDED', output: { phase: 'Completed', errors: 0 } });
    const settings = await core.readNamespacedConfigMap({ namespace, name: 'settings' });
    expect(settings.data).toEqual({ level: 'high' });
    expect(rehearsal.report().violations).toEqual([]);
  });

  /** A small backup of one namespace with two ConfigMaps, for the failure scenarios. */
  async function smallNamespace(): Promise<string> {
    const core = rehearsal.kubeConfig.makeApiClient(CoreV1Api);
    const namespace = uniqueName('small');
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    for (const name of ['one', 'two'])
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { name } } });
    return namespace;
  }

  it('dead-letters the messages a worker cannot finish, redelivered as the mapping says, and ends PartiallyFailed naming their items', {
    timeout: LONG,
  }, async () => {
    const namespace = await smallNamespace();
    const name = uniqueName('poisoned');
    // Every write of this backup's workers is refused: each message fails, is received again
    // after the (compressed) visibility timeout, and after three receives moves to the DLQ.
    const remove = rehearsal.inject({
      caller: /BackupItemBlock$/,
      operation: 'PutObject',
      path: new RegExp(name),
      status: 403,
      code: 'AccessDenied',
    });
    await rehearsal.redeliverAfter(2);
    try {
      const outcome = await rehearsal.start('backup', {
        request: {
          cluster: 'rehearsal',
          backup: { metadata: { name }, spec: { includedNamespaces: [namespace] } },
        },
      });
      expect(outcome).toMatchObject({ status: 'SUCCEEDED', output: { name, phase: 'PartiallyFailed' } });
      expect((outcome.output as { errors: number }).errors).toBeGreaterThan(0);
    } finally {
      remove();
      await rehearsal.redeliverAfter(undefined);
    }
    const invoked = rehearsal.report().usage.invocationsByFunction;
    expect(invoked['Lifeboat-ItemBlockDeadLetters']).toBeGreaterThan(0);
  });

  it('records a backup whose finalizing fails as Failed, with the reason', { timeout: LONG }, async () => {
    const namespace = await smallNamespace();
    const name = uniqueName('unfinished');
    const remove = rehearsal.inject({
      caller: /FinalizeBackup$/,
      operation: 'PutObject',
      path: new RegExp(name),
      status: 403,
      code: 'AccessDenied',
    });
    try {
      const outcome = await rehearsal.start('backup', {
        request: {
          cluster: 'rehearsal',
          backup: { metadata: { name }, spec: { includedNamespaces: [namespace] } },
        },
      });
      expect(outcome).toMatchObject({ status: 'FAILED', error: 'BackupFailed' });
    } finally {
      remove();
    }
    const backup = await storedJson<{ status?: { phase?: string; failureReason?: string } }>(
      `backups/${name}/velero-backup.json`,
    );
    expect(backup.status?.phase).toBe('Failed');
    expect(backup.status?.failureReason).toMatch(/.+/);
    expect(await keysUnder(`plugins/lifeboat/work/backups/${name}/`)).toEqual([]);
  });

  it('records a restore whose finalizing fails as Failed, with the reason and what it restored', {
    timeout: LONG,
  }, async () => {
    const namespace = await smallNamespace();
    const backupName = uniqueName('to-fail');
    const made = await rehearsal.start('backup', {
      request: {
        cluster: 'rehearsal',
        backup: { metadata: { name: backupName }, spec: { includedNamespaces: [namespace] } },
      },
    });
    expect(made, JSON.stringify(made)).toMatchObject({ status: 'SUCCEEDED', output: { phase: 'Completed' } });
    const name = uniqueName('unfinished-restore');
    const remove = rehearsal.inject({
      caller: /FinalizeRestore$/,
      operation: 'PutObject',
      path: new RegExp(name),
      status: 403,
      code: 'AccessDenied',
    });
    try {
      const outcome = await rehearsal.start('restore', {
        request: {
          cluster: 'rehearsal',
          restore: {
            metadata: { name },
            spec: { backupName, namespaceMapping: { [namespace]: uniqueName('failed-target') } },
          },
        },
      });
      expect(outcome).toMatchObject({ status: 'FAILED', error: 'RestoreFailed' });
    } finally {
      remove();
    }
    const record = await storedJson<{
      status?: { phase?: string; failureReason?: string; progress?: { itemsRestored?: number } };
    }>(`plugins/lifeboat/restores/${name}.json`);
    expect(record.status?.phase).toBe('Failed');
    expect(record.status?.failureReason).toMatch(/AccessDenied/);
    expect(record.status?.progress?.itemsRestored).toBeGreaterThan(0);
  });

  it('serves the API: a backup created, shown, linked, then deleted with its snapshot by the delete workflow, each end published to EventBridge', {
    timeout: LONG,
  }, async () => {
    const env = testEnv();
    const aws = {
      endpoint: env.aws.endpoint,
      region: env.aws.region,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    };
    // What a team would route: Lifeboat's events to a queue, through a rule of their own.
    const sqs = new SQSClient(aws);
    const events = new EventBridgeClient(aws);
    const { QueueUrl: queueUrl = '' } = await sqs.send(
      new CreateQueueCommand({ QueueName: uniqueName('lifeboat-events') }),
    );
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    const ruleName = uniqueName('lifeboat-events');
    await events.send(
      new PutRuleCommand({ Name: ruleName, EventPattern: JSON.stringify({ source: ['lifeboat'] }) }),
    );
    await events.send(
      new PutTargetsCommand({ Rule: ruleName, Targets: [{ Id: 'queue', Arn: Attributes?.QueueArn ?? '' }] }),
    );
    const namespace = await smallNamespace();
    const name = uniqueName('api-backup');
    const body = {
      cluster: 'rehearsal',
      backup: {
        apiVersion: 'velero.io/v1',
        kind: 'Backup',
        metadata: { name },
        spec: { includedNamespaces: [namespace] },
      },
    };
    const created = await rehearsal.api({ method: 'POST', path: '/backups', body });
    expect(created.status).toBe(202);
    // The same request again is the same backup; another body under the name is a conflict.
    expect((await rehearsal.api({ method: 'POST', path: '/backups', body })).status).toBe(202);
    const refused = await rehearsal.api({
      method: 'POST',
      path: '/backups',
      body: { ...body, backup: { ...body.backup, spec: { includedNamespaces: 'all' } } },
    });
    expect(refused).toMatchObject({
      status: 400,
      body: { code: 'FailedValidation', problems: [{ path: 'backup.spec.includedNamespaces' }] },
    });
    await rehearsal.settled();
    const got = await rehearsal.api({ method: 'GET', path: `/backups/${name}` });
    expect(got).toMatchObject({ status: 200, body: { metadata: { name }, status: { phase: 'Completed' } } });
    const listed = await rehearsal.api({ method: 'GET', path: '/backups?phase=Completed' });
    expect(
      (listed.body as { items: { metadata: { name: string } }[] }).items.map((b) => b.metadata.name),
    ).toContain(name);
    const described = await rehearsal.api({ method: 'GET', path: `/backups/${name}/describe` });
    expect(
      Object.keys((described.body as { resourceList: Record<string, string[]> }).resourceList),
    ).toContain('v1/ConfigMap');
    const logs = await rehearsal.api({ method: 'GET', path: `/backups/${name}/logs` });
    const fetched = await fetch((logs.body as { url: string }).url);
    expect(fetched.status).toBe(200);
    expect((await fetched.arrayBuffer()).byteLength).toBeGreaterThan(0);
    // A restore of it through the API, into another namespace; then its record deleted.
    const restore = uniqueName('api-restore');
    const restored = await rehearsal.api({
      method: 'POST',
      path: '/restores',
      body: {
        cluster: 'rehearsal',
        restore: {
          apiVersion: 'velero.io/v1',
          kind: 'Restore',
          metadata: { name: restore },
          spec: { backupName: name, namespaceMapping: { [namespace]: uniqueName('api-target') } },
        },
      },
    });
    expect(restored.status).toBe(202);
    await rehearsal.settled();
    expect(await rehearsal.api({ method: 'GET', path: `/restores/${restore}` })).toMatchObject({
      status: 200,
      body: { status: { phase: 'Completed' } },
    });
    expect((await rehearsal.api({ method: 'DELETE', path: `/restores/${restore}` })).status).toBe(200);
    expect((await rehearsal.api({ method: 'GET', path: `/restores/${restore}` })).status).toBe(404);
    expect(await rehearsal.api({ method: 'GET', path: '/clusters' })).toMatchObject({
      status: 200,
      body: { items: [{ name: 'rehearsal' }] },
    });
    // The first backup of this file has an EBS snapshot: the delete workflow deletes it too.
    for (const deleted of [name, backupName])
      expect(await rehearsal.api({ method: 'DELETE', path: `/backups/${deleted}` })).toMatchObject({
        status: 202,
      });
    await rehearsal.settled();
    for (const deleted of [name, backupName]) {
      const deletion = await rehearsal.api({ method: 'GET', path: `/backups/${deleted}/deletion` });
      expect(deletion, JSON.stringify({ deletion, violations: rehearsal.report().violations })).toMatchObject(
        {
          status: 200,
          body: { status: { phase: 'Processed', deleted: true } },
        },
      );
      // Velero's status.errors: none, so none is written.
      expect((deletion.body as { status: { errors?: string[] } }).status.errors ?? []).toEqual([]);
      expect((await rehearsal.api({ method: 'GET', path: `/backups/${deleted}` })).status).toBe(404);
      expect(await keysUnder(`backups/${deleted}/`)).toEqual([]);
    }
    const ec2 = new EC2Client(aws);
    const { Snapshots } = await ec2.send(
      new DescribeSnapshotsCommand({ Filters: [{ Name: 'tag:velero.io/backup', Values: [backupName] }] }),
    );
    expect(Snapshots).toEqual([]);
    const received: { 'detail-type': string; detail: { backup?: string; restore?: string } }[] = [];
    await waitFor('the events of the backup, its restore and both deletions', async () => {
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }),
      );
      for (const m of Messages ?? []) received.push(JSON.parse(m.Body ?? '{}'));
      const seen = received.map((e) => `${e['detail-type']} ${e.detail.restore ?? e.detail.backup}`);
      return [
        `Backup Completed ${name}`,
        `Restore Completed ${restore}`,
        `Deletion Completed ${name}`,
        `Deletion Completed ${backupName}`,
      ].every((e) => seen.includes(e))
        ? true
        : undefined;
    });
    expect(rehearsal.report().violations).toEqual([]);
  });

  it('fires a Schedule as EventBridge Scheduler would, and the GC schedule’s target deletes the backup once expired', {
    timeout: LONG,
  }, async () => {
    const namespace = await smallNamespace();
    const schedule = uniqueName('rehearsed-schedule');
    // The Schedule created through the API, as API Gateway invokes it: the Api function puts its
    // Scheduler schedule with its own role (and passes the scheduler's); backups live a second.
    const created = await rehearsal.api({
      method: 'POST',
      path: '/schedules',
      body: {
        cluster: 'rehearsal',
        schedule: {
          apiVersion: 'velero.io/v1',
          kind: 'Schedule',
          metadata: { name: schedule },
          spec: { schedule: '0 * * * *', template: { includedNamespaces: [namespace], ttl: '1s' } },
        },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const env = testEnv();
    const scheduler = new SchedulerClient({
      endpoint: env.aws.endpoint,
      region: env.aws.region,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    const group = rehearsal.lambda.functionNamed('Lifeboat-Api').environment.LIFEBOAT_SCHEDULE_GROUP;
    const made = await scheduler.send(new GetScheduleCommand({ Name: `${schedule}_0`, GroupName: group }));
    expect(made).toMatchObject({
      ScheduleExpression: 'cron(0 * * * ? *)',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
    });
    // What the API gives Scheduler for every Schedule: the FireSchedule target and its role.
    const api = rehearsal.lambda.functionNamed('Lifeboat-Api').environment;
    const fired = await rehearsal.schedulerFires({
      target: {
        arn: api.LIFEBOAT_SCHEDULE_TARGET_ARN ?? '',
        roleArn: api.LIFEBOAT_SCHEDULER_ROLE_ARN ?? '',
        input: `{"schedule":"${schedule}","scheduledTime":"<aws.scheduler.scheduled-time>"}`,
      },
      scheduledTime: new Date('2026-11-28T04:00:00Z'),
    });
    const name = `${schedule}-20261128040000`;
    expect(fired).toEqual({ ok: true, value: { backup: name } });
    await rehearsal.settled();
    const backup = await storedJson<{
      metadata: { labels?: Record<string, string> };
      status: { phase?: string; expiration?: string };
    }>(`backups/${name}/velero-backup.json`);
    expect(backup.status.phase).toBe('Completed');
    expect(backup.metadata.labels?.['velero.io/schedule-name']).toBe(schedule);
    await waitFor('the backup to expire', async () =>
      Date.parse(backup.status.expiration ?? '') < Date.now() ? true : undefined,
    );
    const collected = await rehearsal.schedulerFires({
      schedule: 'lifeboat-collect-garbage',
      scheduledTime: new Date(),
    });
    expect(collected.ok, JSON.stringify(collected)).toBe(true);
    const report = (collected as unknown as { value: { deleted: { name: string; reasons: string[] }[] } })
      .value;
    expect(report.deleted).toContainEqual({ name, reasons: [expect.stringMatching(/^expired at /)] });
    await rehearsal.settled();
    expect(await keysUnder(`backups/${name}/`)).toEqual([]);
    expect(await storedJson<{ dryRun: boolean }>('plugins/lifeboat/gc/last-report.json')).toMatchObject({
      dryRun: false,
    });
    expect(rehearsal.report().violations).toEqual([]);
  });

  it('drills a backup through the API: the restore workflow nested, its items checked, the report Completed with RPO and RTO', {
    timeout: LONG,
  }, async () => {
    const namespace = await smallNamespace();
    const backup = uniqueName('drilled');
    const backedUp = await rehearsal.start('backup', {
      request: {
        cluster: 'rehearsal',
        backup: { metadata: { name: backup }, spec: { includedNamespaces: [namespace] } },
      },
    });
    expect(backedUp).toMatchObject({ status: 'SUCCEEDED', output: { phase: 'Completed' } });
    const name = uniqueName('drill');
    const target = uniqueName('drill-target');
    const started = await rehearsal.api({
      method: 'POST',
      path: '/drills',
      body: {
        cluster: 'rehearsal',
        drill: {
          metadata: { name },
          spec: { backupName: backup, namespaceMapping: { [namespace]: target } },
        },
      },
    });
    expect(started.status).toBe(202);
    await rehearsal.settled();
    const report = await storedJson<Record<string, unknown>>(`plugins/lifeboat/drills/${name}.json`);
    expect(report).toMatchObject({
      name,
      phase: 'Completed',
      mismatches: [],
      restore: { phase: 'Completed' },
    });
    expect(report.rpoSeconds).toEqual(expect.any(Number));
    expect(report.rtoSeconds).toEqual(expect.any(Number));
    expect((report.items as { checked: number }).checked).toBeGreaterThanOrEqual(2);
    // The restore ran into the mapped namespace of the same cluster.
    const restored = await rehearsal.kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedConfigMap({ namespace: target });
    expect(restored.items.map((c) => c.metadata?.name)).toEqual(expect.arrayContaining(['one', 'two']));
    expect(await rehearsal.api({ method: 'GET', path: `/drills/${name}` })).toMatchObject({
      status: 200,
      body: { name, phase: 'Completed' },
    });
    expect(rehearsal.report().violations).toEqual([]);
  });

  it('fires a Schedule with a drill target: FireSchedule starts the drill of its latest backup, Completed', {
    timeout: LONG,
  }, async () => {
    const namespace = await smallNamespace();
    const schedule = uniqueName('drill-sched');
    const target = uniqueName('sched-target');
    const created = await rehearsal.api({
      method: 'POST',
      path: '/schedules',
      body: {
        cluster: 'rehearsal',
        drill: { cluster: 'rehearsal', namespaceMapping: { [namespace]: target } },
        schedule: {
          metadata: { name: schedule },
          spec: { schedule: '0 5 * * 0', template: { includedNamespaces: [namespace] } },
        },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // The Schedule's earlier backup, Completed, as its previous firing would have left it.
    const earlier = `${schedule}-20261122050000`;
    const backedUp = await rehearsal.start('backup', {
      request: {
        cluster: 'rehearsal',
        backup: {
          metadata: { name: earlier, labels: { 'velero.io/schedule-name': schedule } },
          spec: { includedNamespaces: [namespace] },
        },
      },
    });
    expect(backedUp).toMatchObject({ status: 'SUCCEEDED', output: { phase: 'Completed' } });
    const api = rehearsal.lambda.functionNamed('Lifeboat-Api').environment;
    const fired = await rehearsal.schedulerFires({
      target: {
        arn: api.LIFEBOAT_SCHEDULE_TARGET_ARN ?? '',
        roleArn: api.LIFEBOAT_SCHEDULER_ROLE_ARN ?? '',
        input: `{"schedule":"${schedule}","scheduledTime":"<aws.scheduler.scheduled-time>"}`,
      },
      scheduledTime: new Date('2026-11-29T05:00:00Z'),
    });
    const drill = `${schedule}-drill-20261129050000`;
    expect(fired).toEqual({ ok: true, value: { backup: `${schedule}-20261129050000`, drill } });
    await rehearsal.settled();
    const report = await storedJson<Record<string, unknown>>(`plugins/lifeboat/drills/${drill}.json`);
    expect(report).toMatchObject({
      phase: 'Completed',
      mismatches: [],
      backup: { name: earlier },
      namespaceMapping: { [namespace]: target },
    });
    expect(rehearsal.report().violations).toEqual([]);
  });

  it('has run every function of the template, so each handler was invoked as deployed', () => {
    const invoked = rehearsal.report().usage.invocationsByFunction;
    const never = [...new Set([...rehearsal.lambda.functions.values()].map((f) => f.name))].filter(
      (f) => !invoked[f],
    );
    expect(never).toEqual([]);
  });
});
