/**
 * File mode, restore: setting access and modification times exactly. Node's utimes takes a double
 * of seconds and libuv truncates it to microseconds, so nanoseconds need the `set-times` helper
 * (functions/data-mover/set-times, Go, built into the task's image beside main.mjs): one process
 * per restore, fed a record per path, applying them in order with utimensat(2). Without the
 * helper, times are exact to the microsecond (rounded so a double's error never loses one).
 * Never: report a restore done before every time is applied, or apply a path's times out of order.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { lutimes, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LifeboatError } from '../../shared/domain/errors.js';

export interface EntryTimes {
  readonly atimeNs: string;
  readonly mtimeNs: string;
  /** A symlink's own times (never its target's). */
  readonly symlink?: boolean;
}

export interface FileTimes {
  /** Finest unit the times are exact to. */
  readonly precision: 'nanosecond' | 'microsecond';
  /** Queues a path's times; applied after everything queued before. */
  set(path: Buffer, times: EntryTimes): Promise<void>;
  /** Waits until every queued time is applied; a failure names the paths. */
  close(): Promise<void>;
}

/** The environment variable naming the helper; otherwise `set-times` beside the entry script. */
export const SET_TIMES_VARIABLE = 'LIFEBOAT_SET_TIMES';

/** Seconds as a double at the middle of the microsecond, so truncating it keeps that microsecond. */
function microsecondSeconds(ns: string): number {
  const total = BigInt(ns);
  const us = total / 1000n - (total < 0n && total % 1000n !== 0n ? 1n : 0n);
  return Number(us / 1_000_000n) + (Number(us % 1_000_000n) + 0.5) / 1e6;
}

/** Node's own utimes: exact to the microsecond. */
export const microsecondTimes: FileTimes = {
  precision: 'microsecond',
  async set(path, times) {
    const set = times.symlink ? lutimes : utimes;
    await set(path, microsecondSeconds(times.atimeNs), microsecondSeconds(times.mtimeNs));
  },
  async close() {},
};

/** The helper to use: the variable's, or `set-times` beside the running script, if it exists. */
export function setTimesHelper(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = env[SET_TIMES_VARIABLE];
  if (named) return named;
  const script = process.argv[1];
  const beside = script ? join(dirname(script), 'set-times') : undefined;
  // Run from the sources, `set-times` beside main.ts is the helper's source folder, not the helper.
  const stats = beside ? statSync(beside, { throwIfNoEntry: false }) : undefined;
  return beside && stats?.isFile() && (stats.mode & 0o111) !== 0 ? beside : undefined;
}

/** Times exact to the nanosecond through the helper, started now. */
export function nanosecondTimes(helper: string): FileTimes {
  const child = spawn(helper, [], { stdio: ['pipe', 'pipe', 'pipe'] });
  const output: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => output.push(b));
  child.stderr.on('data', (b: Buffer) => output.push(b));
  const exited = new Promise<{ code: number | null; error?: Error }>((resolve) => {
    child.on('error', (error) => resolve({ code: null, error }));
    child.on('close', (code) => resolve({ code }));
  });
  // A helper that died leaves writes failing with EPIPE: close() reports why it died.
  child.stdin.on('error', () => undefined);
  const NUL = Buffer.from([0]);
  return {
    precision: 'nanosecond',
    async set(path, times) {
      const fields = [Buffer.from(times.symlink ? 'l' : 'f'), path, Buffer.from(times.atimeNs)];
      const record = Buffer.concat([...fields, Buffer.from(times.mtimeNs)].flatMap((f) => [f, NUL]));
      if (!child.stdin.write(record))
        await Promise.race([new Promise((resolve) => child.stdin.once('drain', resolve)), exited]);
    },
    async close() {
      child.stdin.end();
      const { code, error } = await exited;
      if (code === 0) return;
      const said = Buffer.concat(output).toString('utf8').trim().split('\n').slice(0, 5).join('; ');
      throw new LifeboatError(
        `setting file times failed (${helper}: ${error?.message ?? `exit ${code}`}): ${said}`,
        error ? { cause: error } : {},
      );
    },
  };
}

/** Nanosecond times when the helper is there, microsecond ones otherwise. */
export function fileTimes(env: NodeJS.ProcessEnv = process.env): FileTimes {
  const helper = setTimesHelper(env);
  return helper ? nanosecondTimes(helper) : microsecondTimes;
}
