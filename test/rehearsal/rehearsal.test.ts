/**
 * The deployment rehearsal, end to end: from the synthesized cloud assembly alone (every function
 * from its CDK bundle with the template's environment and role, the state machines as rendered,
 * the SQS mappings, the Fargate tasks, EKS access entries and Lifeboat's RBAC manifest), a backup
 * of the sample application — its CRD, an EBS-backed PVC snapshotted natively, a pod backup hook —
 * ends Completed, and its restore after the application is deleted brings every object back,
 * equal to the source. Every AWS call is allowed by its caller's role in the template.
 */
import { DescribeSnapshotsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEnv, uniqueName } from '../integration/support/env.js';
import { waitFor } from '../integration/support/wait.js';
import { type Rehearsal, startRehearsal } from './rehearsal.js';
import { capture, deleteWorkload, hookRan, installWorkload, type Workload, ZONE } from './sample.js';

const LONG = 600_000;

describe('the deployment rehearsal of a backup and a restore', () => {
  let rehearsal: Rehearsal;
  let workload: Workload;
  let source: Map<string, unknown>;
  const backupName = uniqueName('rehearsed');
  const restoreName = uniqueName('rehearsed-restore');

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
    await rehearsal?.stop();
  });

  it('backs up the sample application to Completed, running its hook and snapshotting its EBS volume', {
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
    const restored = await capture(rehearsal.kubeConfig, workload);
    const missing = [...source.keys()].filter((k) => !restored.has(k));
    expect(missing).toEqual([]);
    for (const [id, data] of source)
      if (data !== null) expect({ id, data: restored.get(id) }).toEqual({ id, data });
    expect(rehearsal.report().violations).toEqual([]);
    expect(rehearsal.report().pollerErrors).toEqual([]);
  });
});
