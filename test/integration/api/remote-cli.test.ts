/**
 * The remote `lifeboat` command end to end against `lifeboat server --local`, both compiled as
 * users run them: CLI → HTTP (token from the server's 0600 file) → the API handler → the state
 * machines run by the server → the source cluster, moto and the server's directory. A backup
 * with filters (a label selector; a volume backed up file by file into the data mover's
 * repository, and an EBS volume snapshotted natively in moto) is created and waited on with its
 * progress, listed, described, downloaded and its log shown, restored into the DR cluster and
 * deleted (its snapshot gone from moto, the repository garbage collected); each output is
 * compared with the same verb's `--local` output on the server's directory.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeSnapshotsCommand } from '@aws-sdk/client-ec2';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtLifeboat, commandEnv, type Ran, run, startServer } from '../cli/support.js';
import { kubeConfigFor, testEnv, uniqueName, useDrCluster } from '../support/env.js';
import { ec2, useVolumeFixtures } from '../support/volumes.js';
import { waitFor } from '../support/wait.js';

describe('the remote lifeboat command against lifeboat server --local', () => {
  const fixtures = useVolumeFixtures();
  const dr = useDrCluster();
  let root: string;
  let bin: string;
  let dir: string;
  let server: ChildProcess;
  let env: NodeJS.ProcessEnv;
  let namespace: string;
  const keyFlags = (): string[] => ['--repository-key-file', join(root, 'repository.key')];
  /** The --local flags of the verbs that read the directory, and of those that run (with the key). */
  const local = (): string[] => ['--local', '--dir', dir];
  const localRun = (): string[] => [...local(), ...keyFlags()];
  const lifeboat = (...args: string[]): Promise<Ran> => run({ bin, args, env, timeoutMs: 240_000 });

  beforeAll(async () => {
    const t = testEnv();
    root = await mkdtemp(join(tmpdir(), 'lifeboat-remote-'));
    dir = join(root, 'store');
    ({ bin } = await builtLifeboat());
    env = commandEnv({
      AWS_ENDPOINT_URL: t.aws.endpoint,
      AWS_REGION: t.aws.region,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      LIFEBOAT_TOKEN_FILE: join(root, 'token'),
      LIFEBOAT_CONFIG: join(root, 'config.json'),
      LIFEBOAT_ENDPOINT: undefined,
    });
    namespace = await fixtures.namespace('remote');
    const core = fixtures.kc.makeApiClient(CoreV1Api);
    await waitFor('the default service account', async () =>
      (await core.listNamespacedServiceAccount({ namespace })).items.some(
        (a) => a.metadata?.name === 'default',
      ),
    );
    for (const [name, app] of [
      ['web-config', 'web'],
      ['other-config', 'other'],
    ] as const)
      await core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name, labels: { app } }, data: { name } },
      });
    // A volume backed up file by file (the data mover's repository) and one snapshotted in moto.
    const files = await mkdtemp(join(tmpdir(), 'lifeboat-remote-volume-'));
    await writeFile(join(files, 'table.dat'), 'rows\n');
    await fixtures.claimWithVolume({
      namespace,
      claim: 'data',
      pvcLabels: { app: 'web' },
      source: {
        local: { path: files },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
            ],
          },
        },
      },
      storageClass: uniqueName('local'),
    });
    const zone = `${t.aws.region}a`;
    const volume = await fixtures.ebsVolume({ zone });
    await fixtures.claimWithVolume({
      namespace,
      claim: 'logs',
      pvcLabels: { app: 'web' },
      source: { awsElasticBlockStore: { volumeID: `aws://${zone}/${volume}`, fsType: 'ext4' } },
    });
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: {
          name: 'web',
          labels: { app: 'web' },
          annotations: { 'backup.velero.io/backup-volumes': 'data' },
        },
        spec: {
          containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', 'infinity'] }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        },
      },
    });
    const clusters = `source=${t.clusters.source.kubeconfig},dr=${dr().kubeconfig}`;
    let endpoint: string;
    ({ server, endpoint } = await startServer({
      bin,
      args: ['--local', '--dir', dir, '--clusters', clusters, ...keyFlags()],
      env,
    }));
    env = { ...env, LIFEBOAT_ENDPOINT: endpoint };
  }, 240_000);

  afterAll(async () => {
    server?.kill('SIGTERM');
    await rm(root, { recursive: true, force: true });
  });

  it('writes its token readable by its owner alone, and refuses requests without it', async () => {
    const token = join(root, 'token');
    expect((await stat(token)).mode & 0o777).toBe(0o600);
    const answer = await fetch(`${env.LIFEBOAT_ENDPOINT}/backups`);
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ code: 'Unauthorized' });
  });

  it('creates a backup with filters and waits with progress, as a --local backup of the same', async () => {
    const remote = await lifeboat(
      'backup',
      'create',
      'rb',
      '--include-namespaces',
      namespace,
      '--selector',
      'app=web',
      '--snapshot-volumes',
      '--cluster',
      'source',
      '--wait',
    );
    expect(remote.stdout, remote.stderr).toMatch(
      /^Backup "rb": Completed \((\d+) items, 0 errors, 0 warnings\)\.\n/,
    );
    expect(remote.stderr).toMatch(
      /Backup request "rb" submitted to http:\/\/127\.0\.0\.1:\d+ \(cluster source\)/,
    );
    expect(remote.stderr).toMatch(/\n {2}(New|InProgress)/);
    expect(remote.code).toBe(0);
    const here = await lifeboat(
      'backup',
      'create',
      'lb',
      '--include-namespaces',
      namespace,
      '--selector',
      'app=web',
      '--snapshot-volumes',
      '--kubeconfig',
      testEnv().clusters.source.kubeconfig,
      ...localRun(),
    );
    expect(here.stdout.split('\n')[0], here.stderr).toBe(
      remote.stdout.split('\n')[0]?.replace('"rb"', '"lb"'),
    );
  });

  it('lists and describes it exactly as --local does', async () => {
    for (const args of [
      ['backup', 'get'],
      ['backup', 'get', 'rb', '-o', 'json'],
      ['backup', 'describe', 'rb', '--details'],
    ]) {
      const remote = await lifeboat(...args);
      const here = await lifeboat(...args, ...local());
      expect(remote.code, remote.stderr).toBe(0);
      expect(remote.stdout).toBe(here.stdout);
    }
    const described = await lifeboat('backup', 'describe', 'rb', '--details');
    expect(described.stdout).toContain(`${namespace}/web-config`);
    expect(described.stdout).not.toContain('other-config');
    expect(described.stdout).toMatch(/Snapshot ID: +snap-/);
  });

  it('shows its log and downloads its archive, byte for byte as --local', async () => {
    const remoteLog = await lifeboat('backup', 'logs', 'rb');
    const localLog = await lifeboat('backup', 'logs', 'rb', ...local());
    expect(remoteLog.code, remoteLog.stderr).toBe(0);
    expect(remoteLog.stdout).toContain('Backup Completed');
    expect(remoteLog.stdout).toBe(localLog.stdout);
    const remoteFile = join(root, 'remote.tar.gz');
    const localFile = join(root, 'local.tar.gz');
    const remote = await lifeboat('backup', 'download', 'rb', '--file', remoteFile);
    expect(remote.stdout, remote.stderr).toBe(
      `Backup rb has been successfully downloaded to ${remoteFile}\n`,
    );
    await lifeboat('backup', 'download', 'rb', '--file', localFile, ...local());
    expect(await readFile(remoteFile)).toEqual(await readFile(localFile));
    const again = await lifeboat('backup', 'download', 'rb', '--file', remoteFile);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('give --force');
  });

  it('restores it into the DR cluster, and describes and lists the restore as --local does', async () => {
    const remote = await lifeboat(
      'restore',
      'create',
      'rr',
      '--from-backup',
      'rb',
      '--cluster',
      'dr',
      '--include-resources',
      'configmaps',
      '--wait',
    );
    expect(remote.stdout, remote.stderr).toMatch(
      /^Restore "rr": Completed \(2 created, 0 updated, 0 skipped, 0 failed\)\.\n$/,
    );
    const drCore = kubeConfigFor(dr()).makeApiClient(CoreV1Api);
    const maps = await drCore.listNamespacedConfigMap({ namespace });
    expect(maps.items.map((m) => m.metadata?.name)).toContain('web-config');
    expect(maps.items.map((m) => m.metadata?.name)).not.toContain('other-config');
    for (const args of [
      ['restore', 'get'],
      ['restore', 'describe', 'rr', '--details'],
      ['restore', 'logs', 'rr'],
    ]) {
      const remoteRun = await lifeboat(...args);
      const here = await lifeboat(...args, ...local());
      expect(remoteRun.code, remoteRun.stderr).toBe(0);
      expect(remoteRun.stdout).toBe(here.stdout);
    }
  });

  it('refuses a second create of the name with another body, and a cluster the server does not serve', async () => {
    const other = await lifeboat(
      'backup',
      'create',
      'rb',
      '--include-namespaces',
      'kube-system',
      '--cluster',
      'source',
    );
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('lifeboat: a backup named "rb" already exists');
    const unknown = await lifeboat('backup', 'create', 'x1', '--cluster', 'elsewhere');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      '--cluster (cluster): "elsewhere" is not a cluster this deployment serves (one of: source, dr)',
    );
  });

  it('deletes it: its snapshot gone from moto, the repository garbage collected, as a --local delete', async () => {
    const remote = await lifeboat('backup', 'delete', 'rb', '--confirm');
    expect(remote.stdout, remote.stderr).toMatch(
      /^Backup "rb": deleted: 1 snapshots, 1 repository manifests, (\d+) objects\.\nRepository garbage collection: \d+ packs deleted/,
    );
    expect(remote.code).toBe(0);
    const { Snapshots } = await ec2().send(
      new DescribeSnapshotsCommand({ Filters: [{ Name: 'tag:velero.io/backup', Values: ['rb'] }] }),
    );
    expect(Snapshots).toEqual([]);
    const gone = await lifeboat('backup', 'get', 'rb');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe('lifeboat: backup "rb" not found\n');
    const here = await lifeboat('backup', 'delete', 'lb', '--confirm', ...localRun());
    const counts = (text: string) => /: deleted: (.*)\n/.exec(text)?.[1];
    expect(counts(remote.stdout)).toBe(counts(here.stdout));
    const restored = await lifeboat('restore', 'delete', 'rr', '--confirm');
    expect(restored.stdout).toBe('Restore "rr": deleted (its record and files; what it restored stays).\n');
  });

  it('has published each run’s end, the server’s and the --local verbs’ alike, as lifeboat events shows', async () => {
    const shown = await lifeboat('events', ...local(), '-o', 'json');
    expect(shown.code, shown.stderr).toBe(0);
    const events = JSON.parse(shown.stdout) as {
      source: string;
      'detail-type': string;
      detail: { backup?: string; restore?: string; status: { phase: string } };
    }[];
    const said = events.map((e) => `${e['detail-type']} ${e.detail.restore ?? e.detail.backup}`);
    for (const end of [
      'Backup Completed rb',
      'Backup Completed lb',
      'Restore Completed rr',
      'Deletion Completed rb',
      'Deletion Completed lb',
    ])
      expect(said).toContain(end);
    expect(said.indexOf('Backup Completed rb')).toBeLessThan(said.indexOf('Deletion Completed rb'));
    expect(new Set(events.map((e) => e.source))).toEqual(new Set(['lifeboat']));
    const table = await lifeboat('events', ...local());
    expect(table.stdout).toMatch(/^TIME\s+EVENT\s+NAME\s+CLUSTER\n/);
    expect(table.stdout).toMatch(/Deletion Completed\s+rb/);
  });
});
