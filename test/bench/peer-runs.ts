/**
 * The tools `npm run bench:peers` compares, each as a user runs it: Lifeboat's data mover through
 * its own entry point, compiled as the Fargate image compiles it (esbuild of
 * functions/data-mover/main.ts, the set-times helper beside it), Kopia (zstd, and none as Velero
 * runs it) and restic, each against its own bucket on the same moto endpoint. Every command runs
 * under /usr/bin/time for its CPU seconds and peak RSS.
 */
import { execFile, spawn } from 'node:child_process';
import { copyFile, cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing' };
const PASSWORD = 'bench-password';

export interface Measured {
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly peakRssMiB: number;
}

/** Runs a command to its end under /usr/bin/time; a failure throws with its output's tail. */
export async function timed(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<Measured> {
  return (await timedWithOutput(command, args, env)).measured;
}

/** As `timed`, with what the command printed on stdout (a data-mover job's progress document). */
export async function timedWithOutput(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ measured: Measured; stdout: string }> {
  const report = join(process.env.TMPDIR ?? '/tmp', `bench-time-${process.pid}-${Date.now()}`);
  const started = process.hrtime.bigint();
  const child = spawn('/usr/bin/time', ['-f', '%U %S %M', '-o', report, command, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: Buffer[] = [];
  const stdout: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => {
    output.push(b);
    stdout.push(b);
  });
  child.stderr.on('data', (b: Buffer) => output.push(b));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (code !== 0) {
    const tail = Buffer.concat(output).toString('utf8').slice(-2000);
    throw new Error(`${command} ${args.join(' ')} failed (exit ${code}):\n${tail}`);
  }
  const [user = 0, system = 0, rssKiB = 0] =
    (await readFile(report, 'utf8')).trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
  return {
    measured: { seconds, cpuSeconds: user + system, peakRssMiB: rssKiB / 1024 },
    stdout: Buffer.concat(stdout).toString('utf8'),
  };
}

export interface Tool {
  readonly name: string;
  readonly bucket: string;
  /** Creates the tool's repository (not timed). */
  setup(): Promise<void>;
  /** Backs up the data directory; `phase` names the run. */
  backup(phase: string): Promise<Measured>;
  /** Restores the last backup into `target`; returns where the data directory's copy is. */
  restore(target: string): Promise<{ measured: Measured; root: string }>;
}

export interface Endpoint {
  readonly url: string;
  readonly hostPort: string;
  readonly region: string;
}

/**
 * Compiles the data mover's entry as the image does (code split: a file job never loads the EC2
 * client's chunk); `prebuilt` (a main.mjs, with its chunks beside it) measures another build.
 */
export async function lifeboatBundle(options: {
  dir: string;
  /** The set-times helper file restores use (block jobs need none). */
  setTimes?: string;
  prebuilt?: string;
}): Promise<string> {
  await mkdir(options.dir, { recursive: true });
  const main = join(options.dir, 'main.mjs');
  if (options.prebuilt) await cp(dirname(options.prebuilt), options.dir, { recursive: true });
  else
    await run(
      join(repoRoot, 'node_modules', '.bin', 'esbuild'),
      [
        'functions/data-mover/main.ts',
        '--bundle',
        '--platform=node',
        '--target=node20',
        '--format=esm',
        '--sourcemap',
        '--splitting',
        `--outdir=${options.dir}`,
        '--entry-names=[name]',
        '--chunk-names=[name]-[hash]',
        '--out-extension:.js=.mjs',
        "--banner:js=import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      ],
      { cwd: repoRoot },
    );
  if (options.setTimes) await copyFile(options.setTimes, join(options.dir, 'set-times'));
  return main;
}

export function lifeboatTool(options: {
  main: string;
  endpoint: Endpoint;
  data: string;
  work: string;
  bucket: string;
  /** Another build measured beside this one (a before/after pair) goes by another name. */
  name?: string;
}): Tool {
  const { main, endpoint, data, work, bucket } = options;
  const name = options.name ?? 'lifeboat';
  const env = {
    ...CREDENTIALS,
    AWS_ENDPOINT_URL: endpoint.url,
    AWS_REGION: endpoint.region,
    LIFEBOAT_S3_FORCE_PATH_STYLE: 'true',
  };
  const repository = { bucket, region: endpoint.region, keyFile: join(work, `${name}.key`) };
  let previous: string | undefined;
  const job = async (body: object, name: string): Promise<Measured> => {
    const file = join(work, `${name}.json`);
    await writeFile(file, JSON.stringify(body));
    return timed('node', ['--enable-source-maps', main, 'run', '--job-file', file], env);
  };
  return {
    name,
    bucket,
    async setup() {
      previous = undefined;
    },
    async backup(phase) {
      const manifestId = `${phase}-${Date.now()}`;
      const source = { path: data, ...(previous ? { parentManifestId: previous } : {}) };
      const measured = await job(
        { kind: 'file-backup', jobId: manifestId, repository, manifestId, source },
        manifestId,
      );
      previous = manifestId;
      return measured;
    },
    async restore(target) {
      const jobId = `restore-${Date.now()}`;
      const body = {
        kind: 'file-restore',
        jobId,
        repository,
        manifestId: previous,
        target: { path: target },
      };
      return { measured: await job(body, jobId), root: target };
    },
  };
}

export function kopiaTool(options: {
  binary: string;
  compression: 'zstd' | 'none';
  endpoint: Endpoint;
  data: string;
  work: string;
  bucket: string;
}): Tool {
  const { binary, endpoint, data, work, bucket } = options;
  const config = join(work, `kopia-${options.compression}.config`);
  const env = { ...CREDENTIALS, KOPIA_PASSWORD: PASSWORD, KOPIA_CHECK_FOR_UPDATES: 'false' };
  const kopia = (args: readonly string[]): Promise<Measured> =>
    timed(binary, [...args, `--config-file=${config}`], env);
  return {
    name: `kopia-${options.compression}`,
    bucket,
    async setup() {
      await kopia([
        'repository',
        'create',
        's3',
        `--bucket=${bucket}`,
        `--endpoint=${endpoint.hostPort}`,
        '--disable-tls',
        `--region=${endpoint.region}`,
        `--access-key=${CREDENTIALS.AWS_ACCESS_KEY_ID}`,
        `--secret-access-key=${CREDENTIALS.AWS_SECRET_ACCESS_KEY}`,
        `--cache-directory=${join(work, `kopia-${options.compression}-cache`)}`,
      ]);
      await kopia(['policy', 'set', '--global', `--compression=${options.compression}`]);
    },
    backup: () => kopia(['snapshot', 'create', data, '--no-progress']),
    async restore(target) {
      const { stdout } = await run(binary, ['snapshot', 'list', data, '--json', `--config-file=${config}`], {
        env: { ...process.env, ...env },
        maxBuffer: 64 * 1024 * 1024,
      });
      const id = (JSON.parse(stdout) as { id: string }[]).at(-1)?.id ?? '';
      const measured = await kopia([
        'snapshot',
        'restore',
        id,
        target,
        '--write-sparse-files',
        '--no-progress',
      ]);
      return { measured, root: target };
    },
  };
}

export function resticTool(options: {
  binary: string;
  endpoint: Endpoint;
  data: string;
  work: string;
  bucket: string;
}): Tool {
  const { binary, endpoint, data, work, bucket } = options;
  const env = {
    ...CREDENTIALS,
    RESTIC_REPOSITORY: `s3:${endpoint.url}/${bucket}`,
    RESTIC_PASSWORD: PASSWORD,
    RESTIC_CACHE_DIR: join(work, 'restic-cache'),
    AWS_DEFAULT_REGION: endpoint.region,
  };
  const restic = (args: readonly string[]): Promise<Measured> =>
    timed(binary, [...args, '-o', 's3.bucket-lookup=path', '--quiet'], env);
  return {
    name: 'restic',
    bucket,
    setup: async () => {
      await restic(['init']);
    },
    backup: () => restic(['backup', data]),
    async restore(target) {
      const measured = await restic(['restore', 'latest', '--target', target, '--sparse']);
      return { measured, root: join(target, data) };
    },
  };
}
