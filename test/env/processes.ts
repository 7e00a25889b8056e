/**
 * Child processes of the test environment: started with their output in a log file, waited on
 * until ready while watching for an early exit, and stopped by the PID we started.
 * A component that dies or cannot start fails at once with its name and the tail of its log.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';

export interface ManagedProcess {
  readonly component: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
}

/** Free loopback ports, one per name, all distinct (each is held until all are found). */
export async function freePorts<const K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const servers = await Promise.all(
    names.map(
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.unref();
          server.on('error', reject);
          server.listen({ host: '127.0.0.1', port: 0 }, () => resolve(server));
        }),
    ),
  );
  const ports = {} as Record<K, number>;
  names.forEach((name, i) => {
    const address = servers[i]?.address();
    if (!address || typeof address !== 'object') throw new Error('test environment: no port assigned');
    ports[name] = address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export async function freePort(): Promise<number> {
  return (await freePorts(['port'])).port;
}

export async function logTail(file: string, lines = 25): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export function startProcess(options: {
  readonly component: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Outlive this process (kept-up environments): own process group, not waited on. */
  readonly detached?: boolean;
}): Promise<ManagedProcess> {
  // The child writes to the log file itself, so it keeps running when this process exits.
  const log = openSync(options.logFile, 'a');
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', log, log],
    detached: options.detached ?? false,
  });
  closeSync(log);
  if (options.detached) child.unref();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.once('error', (error) =>
      reject(new Error(`test environment: ${options.component} could not start: ${error.message}`)),
    );
    child.once('spawn', () => {
      const pid = child.pid;
      if (pid === undefined) {
        reject(new Error(`test environment: ${options.component} has no PID`));
        return;
      }
      resolve({ component: options.component, pid, logFile: options.logFile, exited });
    });
  });
}

/**
 * Polls `probe` until it returns true. Fails at once if the process exits first, and after
 * `timeoutMs` otherwise, in both cases naming the component and showing its log.
 */
export async function waitReady(
  proc: ManagedProcess,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void proc.exited.then((code) => {
    exitCode = code;
  });
  while (Date.now() < deadline) {
    if (exitCode !== undefined) {
      throw new Error(
        `test environment: ${proc.component} exited (code ${exitCode}) before it was ready; log ${proc.logFile}:\n${await logTail(proc.logFile)}`,
      );
    }
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `test environment: ${proc.component} not ready after ${timeoutMs / 1000} s; log ${proc.logFile}:\n${await logTail(proc.logFile)}`,
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops processes by PID: SIGTERM, then SIGKILL after a grace period. */
export async function stopPids(pids: readonly number[], graceMs = 5000): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + graceMs;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids.filter(alive)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

export function pidsAlive(pids: readonly number[]): boolean {
  return pids.every(alive);
}
