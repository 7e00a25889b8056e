/**
 * The `lifeboat` package as a user gets it: built (cli/build.ts), packed with `npm pack`,
 * installed from the tarball into a temporary prefix with no registry, and run from there: its
 * help, a `backup get`, and a backup (with a long hook and a volume backed up file by file), a
 * restore and a delete of a real namespace, whose worker thread, hook runner and data mover run
 * from the package's compiled modules. Also what the
 * build loads for `--help` and `backup get`: none of the AWS SDK, the Kubernetes client or the
 * state machine interpreter.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { CoreV1Api } from '@kubernetes/client-node';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPackage } from '../../../cli/build.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import { runningPod } from '../backup/hook-pods.js';
import { testEnv, uniqueName } from '../support/env.js';
import { useVolumeFixtures } from '../support/volumes.js';
import { waitFor } from '../support/wait.js';
import { commandEnv, run } from './support.js';

const execFileAsync = promisify(execFile);

/** The modules an output loads before it runs: its static imports, and theirs. */
function staticClosure(metafile: Metafile, entryPoint: string): string[] {
  const outputs = metafile.outputs;
  const start = Object.keys(outputs).find((o) => outputs[o]?.entryPoint === entryPoint);
  if (!start) throw new Error(`no output of ${entryPoint}`);
  const seen = new Set<string>();
  const stack = [start];
  while (stack.length > 0) {
    const output = stack.pop() as string;
    if (seen.has(output)) continue;
    seen.add(output);
    for (const i of outputs[output]?.imports ?? [])
      if (i.kind === 'import-statement' && !i.external) stack.push(i.path);
  }
  return [...seen];
}

const inputsOf = (metafile: Metafile, outputs: readonly string[]): string[] =>
  outputs.flatMap((o) => Object.keys(metafile.outputs[o]?.inputs ?? {}));

const HEAVY = /node_modules\/(@aws-sdk|@smithy|@kubernetes\/client-node|aws-local-stepfunctions)\//;

describe('the lifeboat package, packed and installed', () => {
  let root: string;
  let metafile: Metafile;
  let bin: string;
  let installed: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'lifeboat-package-'));
    const built = await buildPackage({ dir: join(root, 'dist') });
    metafile = built.metafile;
    const packed = await execFileAsync('npm', ['pack', built.dir, '--pack-destination', root, '--silent']);
    const tarball = join(root, packed.stdout.trim().split('\n').at(-1) ?? '');
    const prefix = join(root, 'prefix');
    await execFileAsync('npm', [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--offline',
      '--no-audit',
      '--no-fund',
      tarball,
    ]);
    bin = join(prefix, 'bin', 'lifeboat');
    installed = join(prefix, 'lib', 'node_modules', 'lifeboat');
  }, 180_000);

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('lists no dependencies and holds the program, its thread and child entries, and the state machines', async () => {
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest).not.toHaveProperty('dependencies');
    expect(manifest.bin).toEqual({ lifeboat: 'lib/lifeboat.mjs' });
    for (const file of [
      'lib/lifeboat.mjs',
      'lib/item-block-thread.mjs',
      'lib/data-mover.mjs',
      'lib/hook-runner.mjs',
      'statemachines/backup.asl.json',
      'statemachines/restore.asl.json',
      'THIRD-PARTY-NOTICES.md',
    ])
      expect(existsSync(join(installed, file)), file).toBe(true);
  });

  it('loads for --help only the command table, and for backup get and the describes none of the heavy clients', () => {
    const help = staticClosure(metafile, 'cli/bin/lifeboat.ts');
    expect(inputsOf(metafile, help).filter((i) => i.includes('node_modules/'))).toEqual([]);
    expect(help.reduce((n, o) => n + (metafile.outputs[o]?.bytes ?? 0), 0)).toBeLessThan(64 * 1024);
    for (const verb of ['get', 'describe', 'delete']
      .map((v) => `cli/backup/${v}.ts`)
      .concat('cli/restore/describe.ts')) {
      const loaded = staticClosure(metafile, verb);
      expect(
        inputsOf(metafile, loaded).filter((i) => HEAVY.test(i)),
        verb,
      ).toEqual([]);
    }
    // The verbs that need them do load them: the check above can fail.
    const create = staticClosure(metafile, 'cli/backup/create.ts');
    expect(inputsOf(metafile, create).some((i) => HEAVY.test(i))).toBe(true);
  });

  it('answers --help from the installed command', async () => {
    const ran = await run({ bin, args: ['--help'] });
    expect(ran).toMatchObject({ code: 0, stderr: '' });
    expect(ran.stdout).toMatch(/^usage: lifeboat <command> \[flags\]/);
  });

  it('lists an empty backup directory', async () => {
    const dir = join(root, 'empty');
    await mkdir(dir);
    const ran = await run({ bin, args: ['backup', 'get', '--local', '--dir', dir] });
    expect(ran).toEqual(
      expect.objectContaining({
        code: 0,
        stdout: 'NAME   STATUS   ERRORS   WARNINGS   CREATED   EXPIRES\n',
        stderr: '',
      }),
    );
  });

  describe('against a cluster', () => {
    const fixtures = useVolumeFixtures();
    let namespace: string;
    let target: string;
    let dir: string;
    /** Where the backups are; and with the cluster, for the verbs that reach one. */
    let storeFlags: string[];
    let flags: string[];

    beforeAll(async () => {
      namespace = await fixtures.namespace('pkg');
      target = `${namespace}-restored`;
      fixtures.namespaces.push(target);
      const core = fixtures.kc.makeApiClient(CoreV1Api);
      await waitFor('the default service account', async () =>
        (await core.listNamespacedServiceAccount({ namespace })).items.some(
          (a) => a.metadata?.name === 'default',
        ),
      );
      for (const name of ['alpha', 'beta'])
        await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { name } } });
      // A local volume backed up file by file (the data mover's task), and a hook that may run
      // longer than a worker's limit (10 min): the hook runner's task runs it.
      const volume = await mkdtemp(join(tmpdir(), 'lifeboat-package-volume-'));
      await writeFile(join(volume, 'table.dat'), 'rows\n');
      await fixtures.claimWithVolume({
        namespace,
        claim: 'data',
        source: {
          local: { path: volume },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
              ],
            },
          },
        },
        storageClass: uniqueName('local'),
        pod: { name: 'db', annotations: { 'backup.velero.io/backup-volumes': 'data' } },
      });
      await runningPod(fixtures.kc, {
        namespace,
        name: 'hooked',
        annotations: {
          'pre.hook.backup.velero.io/command': '["/bin/sh","-c","echo frozen-by-the-packaged-hook-runner"]',
          'pre.hook.backup.velero.io/timeout': '11m',
        },
      });
      dir = join(root, 'backups');
      storeFlags = ['--local', '--dir', dir, '--repository-key-file', join(root, 'key')];
      flags = [...storeFlags, '--kubeconfig', testEnv().clusters.source.kubeconfig];
    }, 120_000);

    it('backs up with its worker thread and hook runner, restores, and deletes with its data mover', async () => {
      const env = commandEnv();
      const backedUp = await run({
        bin,
        args: ['backup', 'create', 'pkg', '--include-namespaces', namespace, ...flags],
        env,
      });
      expect(backedUp.stdout, backedUp.stderr).toMatch(
        /^Backup "pkg": Completed \(\d+ items, 0 errors, 0 warnings\)/,
      );
      expect(backedUp.stderr).not.toContain('not in worker threads');
      const log = gunzipSync(await readFile(join(dir, backupKeys('pkg').logs))).toString('utf8');
      // Written by the hook runner's process (functions/hook-runner), started from the package.
      expect(log).toContain('Long hook run of an ItemBlock started');
      expect(log).toContain('frozen-by-the-packaged-hook-runner');
      const volumes = gunzipSync(await readFile(join(dir, backupKeys('pkg').volumeInfo))).toString('utf8');
      expect(JSON.parse(volumes)).toMatchObject([{ backupMethod: 'PodVolumeBackup', result: 'succeeded' }]);

      const restored = await run({
        bin,
        args: [
          'restore',
          'create',
          'pkg-r',
          '--from-backup',
          'pkg',
          '--namespace-mappings',
          `${namespace}:${target}`,
          // Its volume would wait for a provisioner this cluster has not: the rest comes back.
          '--include-resources',
          'configmaps',
          ...flags,
        ],
        env,
      });
      expect(restored.stdout, restored.stderr).toMatch(/^Restore "pkg-r": Completed \(/);
      const restoredMaps = await fixtures.kc
        .makeApiClient(CoreV1Api)
        .listNamespacedConfigMap({ namespace: target });
      expect(restoredMaps.items.map((m) => m.metadata?.name)).toEqual(
        expect.arrayContaining(['alpha', 'beta']),
      );

      const deleted = await run({
        bin,
        args: ['backup', 'delete', 'pkg', '--confirm', ...storeFlags],
        env,
      });
      expect(deleted.stdout, deleted.stderr).toMatch(/^Backup "pkg": deleted: /);
      expect(deleted.stdout).toMatch(/\nRepository garbage collection: \d+ packs deleted/);
      expect(deleted.code).toBe(0);
    }, 240_000);
  });
});
