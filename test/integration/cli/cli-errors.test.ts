/**
 * The mistakes people make most with `lifeboat`, each answered by the compiled command in one or
 * two lines that name the file, context, server, directory or flag to fix, with the exit status
 * scripts rely on (0 done, 1 failed, 2 command line wrong). Every case also has an elapsed bound:
 * generous (the machine is shared), it is there to catch minute-long retries, which these cases
 * used to take (90 s without a kubeconfig, 3.5 minutes against a server that is down).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { builtLifeboat, closedPort, commandEnv, type Ran, run } from './support.js';

/** Far above any case's honest time, far below the minutes of the retries they replace. */
const BOUND_MS = 30_000;

interface Context {
  readonly bin: string;
  /** The build's folder and this file's own, removed afterwards. */
  readonly build: string;
  readonly root: string;
  /** A backup directory holding backup `bk` of namespace `ns`. */
  readonly dir: string;
  readonly missingDir: string;
  readonly kubeconfig: string;
  readonly deadKubeconfig: string;
  readonly deadServer: string;
  readonly emptyHome: string;
  readonly ns: string;
  readonly keyFile: string;
}

interface Case {
  readonly title: string;
  readonly args: (c: Context) => string[];
  readonly env?: (c: Context) => Record<string, string | undefined>;
  readonly code: number;
  readonly stderr: (c: Context) => RegExp;
  readonly stdout?: (c: Context) => RegExp;
  /** stderr has at most this many lines (default 2: one or two lines say what to fix). */
  readonly stderrLines?: number;
  /** More to check of the run. */
  readonly check?: (ran: Ran) => void;
}

const esc = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

let context: Context;

const local = (c: Context): string[] => ['--local', '--dir', c.dir, '--repository-key-file', c.keyFile];

const CASES: readonly Case[] = [
  {
    title: 'no kubeconfig at all',
    args: (c) => ['backup', 'create', 'b1', '--include-namespaces', c.ns, ...local(c)],
    env: (c) => ({ HOME: c.emptyHome, KUBECONFIG: undefined }),
    code: 2,
    stderr: (c) =>
      new RegExp(
        `^lifeboat: no kubeconfig: \\$KUBECONFIG is not set and ${esc(join(c.emptyHome, '.kube', 'config'))} does not exist \\(name one with --kubeconfig FILE\\)\\n$`,
      ),
  },
  {
    title: 'an API server that is down',
    args: (c) => ['backup', 'create', 'b2', ...local(c), '--kubeconfig', c.deadKubeconfig],
    code: 1,
    stderr: (c) =>
      new RegExp(
        `^lifeboat: cannot reach the Kubernetes API server ${esc(c.deadServer)} \\(context "dead"\\): connect ECONNREFUSED`,
      ),
  },
  {
    title: 'an API server that is down, for a restore',
    args: (c) => [
      'restore',
      'create',
      'r0',
      '--from-backup',
      'bk',
      ...local(c),
      '--kubeconfig',
      c.deadKubeconfig,
    ],
    code: 1,
    stderr: (c) => new RegExp(`^lifeboat: cannot reach the Kubernetes API server ${esc(c.deadServer)} `),
  },
  {
    title: 'a kubeconfig file that does not exist',
    args: (c) => ['backup', 'create', 'b3', ...local(c), '--kubeconfig', join(c.emptyHome, 'nope.yaml')],
    code: 2,
    stderr: (c) =>
      new RegExp(`^lifeboat: the kubeconfig ${esc(join(c.emptyHome, 'nope.yaml'))} does not exist\\n$`),
  },
  {
    title: 'a $KUBECONFIG naming no file that exists',
    args: (c) => ['backup', 'create', 'b4', ...local(c)],
    env: (c) => ({ KUBECONFIG: join(c.emptyHome, 'gone') }),
    code: 2,
    stderr: (c) =>
      new RegExp(
        `^lifeboat: \\$KUBECONFIG names ${esc(join(c.emptyHome, 'gone'))}, and no such file exists\\n$`,
      ),
  },
  {
    title: 'an unknown --context',
    args: (c) => ['backup', 'create', 'b5', ...local(c), '--kubeconfig', c.kubeconfig, '--context', 'nope'],
    code: 2,
    stderr: (c) =>
      new RegExp(
        `^lifeboat: context "nope" is not in the kubeconfig ${esc(c.kubeconfig)} \\(its contexts: [^)]+\\)\\n$`,
      ),
  },
  {
    title: 'a --dir that does not exist, for backup describe',
    args: (c) => ['backup', 'describe', 'bk', '--local', '--dir', c.missingDir],
    code: 2,
    stderr: (c) =>
      new RegExp(`^lifeboat: --dir ${esc(c.missingDir)} does not exist \\(no backups there\\)\\n$`),
  },
  {
    title: 'a --dir that does not exist, for backup get',
    args: (c) => ['backup', 'get', '--local', '--dir', c.missingDir],
    code: 2,
    stderr: (c) => new RegExp(`^lifeboat: --dir ${esc(c.missingDir)} does not exist`),
  },
  {
    title: 'a --dir that does not exist, for restore create',
    args: (c) => [
      'restore',
      'create',
      '--from-backup',
      'bk',
      '--local',
      '--dir',
      c.missingDir,
      '--kubeconfig',
      c.kubeconfig,
    ],
    code: 2,
    stderr: (c) => new RegExp(`^lifeboat: --dir ${esc(c.missingDir)} does not exist`),
  },
  {
    title: 'a backup the directory does not hold',
    args: (c) => ['backup', 'describe', 'nothing', '--local', '--dir', c.dir],
    code: 1,
    stderr: (c) => new RegExp(`^lifeboat: backup "nothing" not found in ${esc(c.dir)}\\n$`),
  },
  {
    title: 'a misspelt flag',
    args: (c) => ['backup', 'get', '--local', '--dri', c.dir],
    code: 2,
    stderr: () => /^lifeboat: unknown flag --dri \(did you mean --dir\?\); see lifeboat backup get --help\n$/,
  },
  {
    title: 'a bad flag value, named by its flag before anything runs',
    args: (c) => [
      'backup',
      'create',
      'b6',
      '--ttl',
      'forever',
      ...local(c),
      '--kubeconfig',
      c.deadKubeconfig,
    ],
    code: 2,
    stderr: () => /^lifeboat: --ttl: .+ \(backup\.spec\.ttl\)\n$/,
  },
  {
    title: 'a namespace mapping for a namespace not in the backup: a warning, not silence',
    args: (c) => [
      'restore',
      'create',
      'rmap',
      '--from-backup',
      'bk',
      '--namespace-mappings',
      `ghost:ghost-copy,${c.ns}:${c.ns}-copy`,
      ...local(c),
      '--kubeconfig',
      c.kubeconfig,
    ],
    code: 0,
    stdout: () =>
      /^Restore "rmap": Completed \(\d+ created, 0 updated, \d+ skipped, 0 failed; 1 warning\)\.\n$/,
    stderr: () =>
      /\nWarnings:\n {2}Velero: {3}<none>\n {2}Cluster: {2}<none>\n {2}Namespaces:\n {4}ghost: {2}namespace mapping "ghost:ghost-copy" restores nothing: backup "bk" has no namespace "ghost"$/m,
    stderrLines: 40,
  },
  {
    title: '--include-items matching nothing: a warning, not silence',
    args: (c) => [
      'restore',
      'create',
      'ritems',
      '--from-backup',
      'bk',
      '--include-items',
      `configmaps/${c.ns}/nope`,
      ...local(c),
      '--kubeconfig',
      c.kubeconfig,
    ],
    code: 0,
    stdout: () => /; 1 warning\)\.\n$/,
    stderr: (c) =>
      new RegExp(
        `\\n {4}${esc(c.ns)}: {2}includeItems "configmaps/${esc(c.ns)}/nope" restores nothing: backup "bk" has no such item$`,
        'm',
      ),
    stderrLines: 40,
  },
  {
    title: 'restore describe prints the warnings with their text, by namespace',
    args: (c) => ['restore', 'describe', 'rmap', '--local', '--dir', c.dir],
    code: 0,
    stdout: () =>
      /\nWarnings:\n {2}Velero: {3}<none>\n {2}Cluster: {2}<none>\n {2}Namespaces:\n {4}ghost: {2}namespace mapping "ghost:ghost-copy" restores nothing/,
    stderr: () => /^$/,
  },
  {
    title: 'restore describe -o yaml carries the warnings with their text',
    args: (c) => ['restore', 'describe', 'rmap', '--local', '--dir', c.dir, '-o', 'yaml'],
    code: 0,
    stdout: () => /^apiVersion: velero\.io\/v1\nkind: Restore\n/,
    stderr: () => /^$/,
    check: (ran) =>
      expect(parse(ran.stdout)).toMatchObject({
        results: {
          errors: {},
          warnings: {
            namespaces: {
              ghost: [
                'namespace mapping "ghost:ghost-copy" restores nothing: backup "bk" has no namespace "ghost"',
              ],
            },
          },
        },
      }),
  },
  {
    title: '--dry-run checks the name as a real run does',
    args: (c) => [
      'restore',
      'create',
      'rmap',
      '--from-backup',
      'bk',
      '--dry-run',
      ...local(c),
      '--kubeconfig',
      c.kubeconfig,
    ],
    code: 1,
    stderr: () =>
      /\nRestore "rmap": FailedValidation\nrestore\.metadata\.name: a restore named "rmap" already exists\n$/,
    stderrLines: 3,
  },
  {
    title: "the AWS SDK's Node version warning is not shown",
    args: (c) => ['backup', 'delete', 'nothing', '--confirm', '--snapshot-region', 'us-east-1', ...local(c)],
    env: () => ({ AWS_EC2_METADATA_DISABLED: 'true' }),
    code: 1,
    stderr: (c) => new RegExp(`^lifeboat: backup "nothing" not found in ${esc(c.dir)}\\n$`),
  },
];

async function fixtures(): Promise<Context> {
  const { bin, dir: build } = await builtLifeboat();
  const root = await mkdtemp(join(tmpdir(), 'lifeboat-cli-errors-'));
  const dir = join(root, 'backups');
  await mkdir(dir);
  const emptyHome = join(root, 'home');
  await mkdir(emptyHome);
  const deadServer = `https://127.0.0.1:${await closedPort()}`;
  const deadKubeconfig = join(root, 'dead.kubeconfig');
  await writeFile(
    deadKubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "${deadServer}", insecure-skip-tls-verify: true}}]`,
      'contexts: [{name: dead, context: {cluster: c, user: u}}]',
      'current-context: dead',
      'users: [{name: u, user: {token: not-a-real-token}}]',
    ].join('\n'),
  );
  const cluster = testEnv().clusters.source;
  const ns = uniqueName('cli');
  const core = kubeConfigFor(cluster).makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });
  for (const name of ['one', 'two'])
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name }, data: { k: name } } });
  return {
    bin,
    build,
    root,
    dir,
    missingDir: join(root, 'no-such-dir'),
    kubeconfig: cluster.kubeconfig,
    deadKubeconfig,
    deadServer,
    emptyHome,
    ns,
    keyFile: join(root, 'repository.key'),
  };
}

describe('lifeboat, given the mistakes people make most', () => {
  beforeAll(async () => {
    context = await fixtures();
    const backedUp = await run({
      bin: context.bin,
      args: [
        'backup',
        'create',
        'bk',
        '--include-namespaces',
        context.ns,
        ...local(context),
        '--kubeconfig',
        context.kubeconfig,
      ],
    });
    expect(backedUp.stdout, backedUp.stderr).toMatch(/^Backup "bk": Completed/);
  });

  afterAll(async () => {
    for (const folder of [dirname(context.build), context.root])
      await rm(folder, { recursive: true, force: true });
    const core = kubeConfigFor(testEnv().clusters.source).makeApiClient(CoreV1Api);
    for (const name of [context.ns, `${context.ns}-copy`])
      await core.deleteNamespace({ name }).catch(() => undefined);
  });

  it.each(CASES)('$title', async (c) => {
    const ran: Ran = await run({
      bin: context.bin,
      args: c.args(context),
      env: commandEnv(c.env?.(context) ?? {}),
      timeoutMs: BOUND_MS * 2,
    });
    const said = `stdout: ${ran.stdout}\nstderr: ${ran.stderr}`;
    expect(ran.stderr, said).toMatch(c.stderr(context));
    if (c.stdout) expect(ran.stdout, said).toMatch(c.stdout(context));
    expect(ran.stderr.trimEnd().split('\n').length, said).toBeLessThanOrEqual(c.stderrLines ?? 2);
    c.check?.(ran);
    expect(ran.code, said).toBe(c.code);
    expect(ran.ms, said).toBeLessThan(BOUND_MS);
  });
});
