/**
 * Makes sure the binaries of the local test environment exist, building or installing what is
 * missing: the kubecp control plane and Velero with its AWS plugin (Go, each cached by the hash
 * of its inputs), KWOK (pinned
 * `go install`), the moto server and cfn-lint (a venv each, cached by the hash of its requirements).
 * Runs on a bare machine with only Go, Python and openssl; never downloads anything but
 * Go modules and PyPI packages.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  cacheRoot,
  KUBERNETES_VERSION,
  KWOK_MODULE,
  KWOK_VERSION,
  VELERO_AWS_PLUGIN_VERSION,
  VELERO_VERSION,
} from './versions.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

export interface Tools {
  readonly kubecp: string;
  readonly kwok: string;
  readonly kwokStages: readonly string[];
  readonly motoPython: string;
  readonly motoLauncher: string;
  /** cfn-lint, pinned in its own venv (test/env/cfn-lint/requirements.txt). */
  readonly cfnLint: string;
  /** The `velero` command (client and server) and the directory holding its AWS plugin. */
  readonly velero: VeleroTools;
}

export interface VeleroTools {
  readonly binary: string;
  readonly pluginDir: string;
}

async function requireCommand(command: string, args: readonly string[], purpose: string): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, [...args]);
    return `${stdout}${stderr}`.trim();
  } catch (error) {
    throw new Error(`test environment: '${command}' is needed for ${purpose} but could not be run`, {
      cause: error,
    });
  }
}

/** Runs a build step, streaming its output only when it fails. */
async function step(label: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const started = Date.now();
  process.stderr.write(`[env] ${label}…\n`);
  const output: Buffer[] = [];
  const child = spawn(command, [...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode ?? 1));
  });
  if (code !== 0) {
    const tail = Buffer.concat(output).toString('utf8').split('\n').slice(-40).join('\n');
    throw new Error(`test environment: ${label} failed (exit ${code}):\n${tail}`);
  }
  process.stderr.write(`[env] ${label}: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

function hash(parts: readonly (string | Buffer)[]): string {
  const digest = createHash('sha256');
  for (const part of parts) digest.update(part);
  return digest.digest('hex').slice(0, 16);
}

const goEnv = { GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-p=2' };

async function ensureKubecp(goVersion: string): Promise<string> {
  const source = join(here, 'kubecp');
  const contents = await moduleInputs(source);
  const ldflags = [
    '-s -w',
    '-X k8s.io/component-base/version.gitMajor=1',
    `-X k8s.io/component-base/version.gitMinor=${KUBERNETES_VERSION.split('.')[1]}`,
    `-X k8s.io/component-base/version.gitVersion=${KUBERNETES_VERSION}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
  ].join(' ');
  const key = hash([goVersion, ldflags, ...contents]);
  const target = join(cacheRoot(), 'kubecp', key, 'kubecp');
  if (existsSync(target)) return target;
  await mkdir(dirname(target), { recursive: true });
  const partial = `${target}.partial-${process.pid}`;
  await step(
    `building the Kubernetes ${KUBERNETES_VERSION} control plane (kubecp; a cold build takes 10-25 min)`,
    'go',
    ['build', '-C', source, '-trimpath', '-ldflags', ldflags, '-o', partial, '.'],
    goEnv,
  );
  await rename(partial, target);
  return target;
}

/** Go sources of a wrapper module, in name order, each prefixed by its name: its build's inputs. */
async function moduleInputs(source: string): Promise<string[]> {
  const files = (await readdir(source)).filter((f) => f.endsWith('.go') || f === 'go.mod' || f === 'go.sum');
  return Promise.all(files.sort().map(async (f) => `${f}\n${await readFile(join(source, f))}`));
}

/**
 * Velero and velero-plugin-for-aws, built from the Go module proxy through the wrapper module
 * test/env/velero (its go.mod pins both and repeats Velero's own `replace` of Kopia). One
 * `go build` makes both; a cold build takes 10-15 min on two loaded cores.
 */
export async function ensureVelero(goVersion: string): Promise<VeleroTools> {
  const source = join(here, 'velero');
  const ldflags = `-s -w -X github.com/vmware-tanzu/velero/pkg/buildinfo.Version=${VELERO_VERSION}`;
  const key = hash([goVersion, ldflags, ...(await moduleInputs(source))]);
  const dir = join(cacheRoot(), 'velero', key);
  const tools = { binary: join(dir, 'velero'), pluginDir: join(dir, 'plugins') };
  if (existsSync(join(tools.pluginDir, 'velero-plugin-for-aws')) && existsSync(tools.binary)) return tools;
  const partial = `${dir}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(join(partial, 'plugins'), { recursive: true });
  await step(
    `building Velero ${VELERO_VERSION} and velero-plugin-for-aws ${VELERO_AWS_PLUGIN_VERSION} (a cold build takes 10-15 min)`,
    'go',
    [
      'build',
      '-C',
      source,
      '-trimpath',
      '-ldflags',
      ldflags,
      '-o',
      `${partial}/`,
      'github.com/vmware-tanzu/velero/cmd/velero',
      'github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws',
    ],
    goEnv,
  );
  // Velero's server runs every executable of its plugin directory: the plugin alone goes there.
  await rename(join(partial, 'velero-plugin-for-aws'), join(partial, 'plugins', 'velero-plugin-for-aws'));
  await rm(dir, { recursive: true, force: true });
  await rename(partial, dir);
  return tools;
}

async function ensureKwok(): Promise<{ binary: string; stages: string[] }> {
  const bin = join(cacheRoot(), 'kwok', KWOK_VERSION);
  const binary = join(bin, 'kwok');
  if (!existsSync(binary)) {
    await mkdir(bin, { recursive: true });
    await step(
      `installing KWOK ${KWOK_VERSION}`,
      'go',
      ['install', `${KWOK_MODULE}/cmd/kwok@${KWOK_VERSION}`],
      {
        ...goEnv,
        GOBIN: bin,
      },
    );
  }
  // The stage documents ship in the KWOK module itself; read them from the module cache.
  const { stdout } = await run('go', ['mod', 'download', '-json', `${KWOK_MODULE}@${KWOK_VERSION}`], {
    env: { ...process.env, ...goEnv },
  });
  const moduleDir = (JSON.parse(stdout) as { Dir: string }).Dir;
  const stageDirs = [
    'kustomize/stage/node/fast',
    'kustomize/stage/node/heartbeat-with-lease',
    'kustomize/stage/pod/fast',
  ];
  const stages: string[] = [];
  for (const dir of stageDirs) {
    for (const file of (await readdir(join(moduleDir, dir))).sort()) {
      if (file.endsWith('.yaml') && file !== 'kustomization.yaml') stages.push(join(moduleDir, dir, file));
    }
  }
  return { binary, stages };
}

/** A venv with the pinned requirements of test/env/<name>, cached by their hash; its bin directory. */
async function ensureVenv(options: { name: string; label: string; pythonVersion: string }): Promise<string> {
  const requirements = join(here, options.name, 'requirements.txt');
  const key = hash([options.pythonVersion, await readFile(requirements)]);
  const venv = join(cacheRoot(), options.name, key);
  const bin = join(venv, 'bin');
  const marker = join(venv, '.complete');
  if (existsSync(marker)) return bin;
  await rm(venv, { recursive: true, force: true });
  await mkdir(dirname(venv), { recursive: true });
  await step(`creating the ${options.label} venv`, 'python3', ['-m', 'venv', venv]);
  await step(`installing ${options.label} (PyPI)`, join(bin, 'python'), [
    '-m',
    'pip',
    'install',
    '--quiet',
    '-r',
    requirements,
  ]);
  await writeFile(marker, new Date().toISOString());
  return bin;
}

export async function ensureTools(): Promise<Tools> {
  const goVersion = await requireCommand('go', ['version'], 'building kube-apiserver and KWOK');
  const pythonVersion = await requireCommand('python3', ['--version'], 'the moto AWS emulator');
  await requireCommand('openssl', ['version'], 'the control plane certificates');
  // Everything runs at once: the Go builds share the two cores (each runs -p=2) but spend much
  // of a cold build fetching modules and linking on one core, and pip mostly waits on the
  // network. KWOK after the others cost a cold CI run 11 of its 28 tool minutes.
  const [motoBin, cfnLintBin, kubecp, velero, kwok] = await Promise.all([
    ensureVenv({ name: 'moto', label: 'moto', pythonVersion }),
    ensureVenv({ name: 'cfn-lint', label: 'cfn-lint', pythonVersion }),
    ensureKubecp(goVersion),
    ensureVelero(goVersion),
    ensureKwok(),
  ]);
  const tools: Tools = {
    kubecp,
    kwok: kwok.binary,
    kwokStages: kwok.stages,
    motoPython: join(motoBin, 'python'),
    motoLauncher: join(here, 'moto', 'launch.py'),
    cfnLint: join(cfnLintBin, 'cfn-lint'),
    velero,
  };
  await mkdir(cacheRoot(), { recursive: true });
  await writeFile(join(cacheRoot(), 'tools.json'), JSON.stringify(tools, null, 2));
  return tools;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  ensureTools()
    .then(() =>
      process.stderr.write(`[env] tools ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`),
    )
    .catch((error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}
