/**
 * The `lifeboat` command as users run it, for the CLI's integration tests: compiled by
 * cli/build.ts into a temporary folder (or installed from its packed tarball), run as a child
 * process with the environment a test gives, its exit status, output and elapsed time kept.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildPackage } from '../../../cli/build.js';

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** The compiled program of a fresh build, and the build's folder. */
export async function builtLifeboat(): Promise<{ bin: string; dir: string }> {
  const dir = join(await mkdtemp(join(tmpdir(), 'lifeboat-build-')), 'dist');
  await buildPackage({ dir });
  return { bin: join(dir, 'lib', 'lifeboat.mjs'), dir };
}

/**
 * The process's environment for a run: this one's, without what would change the command's
 * behaviour unasked (a kubeconfig, a debug switch, the SDK warning's own switch), plus `env`.
 */
export function commandEnv(env: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of ['KUBECONFIG', 'LIFEBOAT_DEBUG', 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'])
    delete base[name];
  const merged: NodeJS.ProcessEnv = { ...base };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}

/** Runs a program to its end (never past `timeoutMs`: then it is killed, and the run says so). */
export function run(options: {
  readonly bin: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
}): Promise<Ran> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(options.bin, [...options.args], {
      env: options.env ?? commandEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      stderr += `\n[test] killed after ${timeoutMs} ms`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** A loopback port nothing listens on: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * `lifeboat server …` started from the built command; resolves with the process and the endpoint
 * it prints on its first line, or rejects with its stderr when it exits first.
 */
export async function startServer(options: {
  readonly bin: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}): Promise<{ server: ChildProcess; endpoint: string }> {
  const server = spawn(options.bin, ['server', ...options.args], {
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    server.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(line);
    });
    server.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
    });
    server.once('exit', (code) => reject(new Error(`the server exited ${code}: ${err}`)));
  });
  return { server, endpoint };
}
