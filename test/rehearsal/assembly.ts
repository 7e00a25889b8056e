/**
 * The cloud assembly a team would deploy, made by the README's own command
 * (`npx cdk synth -c lifeboat:clusters=…`) with no AWS account, region or credentials in the
 * environment, as on a laptop. Synthesized once per set of inputs (the hash of infra/,
 * functions/, shared/, statemachines/, cdk.json and the lock file) under node_modules/.cache, so
 * the template checks and the rehearsal share one; a second process that races the first keeps
 * whichever finished first.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INPUTS = [
  'infra',
  'functions',
  'shared',
  'statemachines',
  'cdk.json',
  'package-lock.json',
  'tsconfig.json',
];

/** The cluster names the rehearsal's stack serves (`-c lifeboat:clusters=…`). */
export const REHEARSAL_CLUSTERS = ['rehearsal'];

async function filesUnder(path: string): Promise<string[]> {
  const full = join(ROOT, path);
  if (!existsSync(full)) return [];
  const entries = await readdir(full, { withFileTypes: true, recursive: true }).catch(() => undefined);
  if (!entries) return [path];
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
}

async function inputsHash(
  clusters: readonly string[],
  context: SynthContext = {},
  region?: string,
): Promise<string> {
  const digest = createHash('sha256').update(clusters.join(','));
  if (region) digest.update(`\0region=${region}`);
  // Other context keys (the DR rehearsal's stacks); none leaves the single stack's hash as it was.
  for (const [key, value] of Object.entries(context).sort()) digest.update(`\0${key}=${value}`);
  for (const input of INPUTS) {
    for (const file of await filesUnder(input)) digest.update(file).update(await readFile(join(ROOT, file)));
  }
  return digest.digest('hex').slice(0, 16);
}

/** The environment of a machine with no AWS configuration at all. */
export function withoutAws(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(
    Object.entries(env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('CDK_')),
  );
  return {
    ...clean,
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
    // No instance metadata service answers here; without this the CLI waits for its timeouts.
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

export interface SynthResult {
  readonly code: number;
  readonly output: string;
}

/** Context keys given to the synth besides `lifeboat:clusters` (`-c key=value` each). */
export type SynthContext = Readonly<Record<string, string>>;

/** Runs the README's synth command into `outdir`. */
export async function runSynth(options: {
  clusters: readonly string[];
  outdir: string;
  context?: SynthContext;
  /** The region a deployer's configuration names (the CLI's default, us-east-1, without one). */
  region?: string;
}): Promise<SynthResult> {
  const args = [
    'cdk',
    'synth',
    '-q',
    '-c',
    `lifeboat:clusters=${options.clusters.join(',')}`,
    ...Object.entries(options.context ?? {}).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
    '-o',
    options.outdir,
  ];
  const child = spawn('npx', args, {
    cwd: ROOT,
    env: { ...withoutAws(process.env), ...(options.region ? { AWS_REGION: options.region } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  child.stderr.on('data', (c: Buffer) => chunks.push(c));
  const code = await new Promise<number>((done, fail) => {
    child.on('error', fail);
    child.on('close', (exit) => done(exit ?? 1));
  });
  return { code, output: Buffer.concat(chunks).toString('utf8') };
}

/** The directory of a synthesized assembly for these clusters (and context), made if missing. */
export async function synthesizedAssembly(
  clusters: readonly string[] = REHEARSAL_CLUSTERS,
  context: SynthContext = {},
  region?: string,
): Promise<string> {
  const hash = await inputsHash(clusters, context, region);
  const dir = join(ROOT, 'node_modules', '.cache', 'lifeboat', `cdk-out-${hash}`);
  if (existsSync(join(dir, 'manifest.json'))) return dir;
  await mkdir(dirname(dir), { recursive: true });
  const partial = `${dir}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  const result = await runSynth({ clusters, outdir: partial, context, ...(region ? { region } : {}) });
  if (result.code !== 0)
    throw new Error(`cdk synth failed (exit ${result.code}):\n${result.output.slice(-4000)}`);
  await rename(partial, dir).catch(async (error: NodeJS.ErrnoException) => {
    // Another process renamed its assembly first: the same inputs made the same files.
    if (!existsSync(join(dir, 'manifest.json'))) throw error;
    await rm(partial, { recursive: true, force: true });
  });
  return dir;
}
