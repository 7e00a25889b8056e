/**
 * The rehearsal notices a stack that would not work: one environment variable dropped from a
 * function, one IAM statement dropped from a role, one verb dropped from the RBAC manifest — each
 * makes a backup that the intact stack completes fail or fall short, with the cause named.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { testEnv, uniqueName } from '../integration/support/env.js';
import { waitFor } from '../integration/support/wait.js';
import { RBAC_MANIFEST } from './eks.js';
import { type Rehearsal, type RehearsalOptions, startRehearsal } from './rehearsal.js';
import { namespaceForPods } from './sample.js';
import { type CloudAssembly, type Json, resourcesOf } from './template.js';

const LONG = 600_000;

/** The template's Lambda function whose name ends with `-<name>`. */
function functionResource(assembly: CloudAssembly, name: string) {
  const found = resourcesOf(assembly.template, 'AWS::Lambda::Function').find(
    ([, r]) => r.Properties?.FunctionName === `${assembly.stackName}-${name}`,
  );
  if (!found) throw new Error(`no function ${name}`);
  return found[1];
}

describe('the rehearsal fails a broken stack', () => {
  let rehearsal: Rehearsal | undefined;
  afterEach(async () => {
    await rehearsal?.stop();
    rehearsal = undefined;
  });

  async function start(options: Pick<RehearsalOptions, 'alter' | 'rbacManifest'>): Promise<Rehearsal> {
    const env = testEnv();
    rehearsal = await startRehearsal({ tools: env.tools, aws: env.aws, ...options });
    return rehearsal;
  }

  /** A namespace with a ConfigMap and a Running pod whose long backup pre hook writes a file. */
  async function workload(r: Rehearsal): Promise<{ namespace: string; marker: string }> {
    const core = r.kubeConfig.makeApiClient(CoreV1Api);
    const namespace = await namespaceForPods(core, 'broken');
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { a: '1' } },
    });
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: {
          name: 'app',
          // A hook that may outlast a worker's inline limit: the hook runner (a Fargate task) runs
          // it, with its role's access entry, which holds only Lifeboat's groups.
          annotations: {
            'pre.hook.backup.velero.io/command': '["/bin/sh","-c","echo ok > marker"]',
            'pre.hook.backup.velero.io/timeout': '30m',
          },
        },
        spec: { containers: [{ name: 'app', image: 'app:1' }] },
      },
    });
    await waitFor('the pod to run', async () =>
      (await core.readNamespacedPod({ namespace, name: 'app' })).status?.phase === 'Running'
        ? true
        : undefined,
    );
    return { namespace, marker: join(r.cluster.execDir, namespace, 'app', 'marker') };
  }

  const backup = (r: Rehearsal, namespace: string) =>
    r.start('backup', {
      request: {
        cluster: 'rehearsal',
        backup: { metadata: { name: uniqueName('broken') }, spec: { includedNamespaces: [namespace] } },
      },
    });

  it('without the queue URL in CollectItems’ environment, the backup fails naming the variable', {
    timeout: LONG,
  }, async () => {
    const r = await start({
      alter: (assembly) => {
        const environment = functionResource(assembly, 'CollectItems').Properties?.Environment as
          | { Variables: Record<string, Json> }
          | undefined;
        if (!environment) throw new Error('CollectItems has no environment');
        delete environment.Variables.ITEM_BLOCK_QUEUE_URL;
      },
    });
    const { namespace } = await workload(r);
    const outcome = await backup(r, namespace);
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'BackupFailed' });
    expect(outcome.cause).toContain('ITEM_BLOCK_QUEUE_URL');
  });

  it('without the statement that lets CollectItems send to the queue, the call is refused and the backup fails', {
    timeout: LONG,
  }, async () => {
    const r = await start({
      alter: (assembly) => {
        const role = JSON.stringify(functionResource(assembly, 'CollectItems').Properties?.Role);
        for (const [, policy] of resourcesOf(assembly.template, 'AWS::IAM::Policy')) {
          const roles = JSON.stringify(policy.Properties?.Roles);
          const roleRef = JSON.parse(role) as { 'Fn::GetAtt'?: [string, string] };
          if (!roleRef['Fn::GetAtt'] || !roles.includes(roleRef['Fn::GetAtt'][0])) continue;
          const document = policy.Properties?.PolicyDocument as {
            Statement: { Action: string | string[] }[];
          };
          document.Statement = document.Statement.filter(
            (s) => ![s.Action].flat().includes('sqs:SendMessage'),
          );
        }
      },
    });
    const { namespace } = await workload(r);
    const outcome = await backup(r, namespace);
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'BackupFailed' });
    expect(r.report().violations.join('\n')).toMatch(/Lifeboat-CollectItems .*sqs:SendMessage/);
  });

  it('without the verb the exec upgrade is authorized by (get, on Kubernetes 1.34), the hook is forbidden and the backup is not Completed', {
    timeout: LONG,
  }, async () => {
    const manifest = join(tmpdir(), `${uniqueName('rbac')}.yaml`);
    const text = await readFile(RBAC_MANIFEST, 'utf8');
    const broken = text.replace(
      'resources: ["pods/exec"]\n    verbs: ["create", "get"]',
      'resources: ["pods/exec"]\n    verbs: ["create"]',
    );
    expect(broken).not.toBe(text);
    await writeFile(manifest, broken);
    const r = await start({ rbacManifest: manifest });
    const { namespace, marker } = await workload(r);
    const outcome = await backup(r, namespace);
    expect(outcome.status).toBe('SUCCEEDED');
    expect((outcome.output as { phase: string }).phase).toBe('PartiallyFailed');
    expect(existsSync(marker)).toBe(false);
  });
});
