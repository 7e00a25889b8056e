/**
 * The local backup's ItemBlock workers in worker threads: in AWS the workers are Lambdas beside
 * CollectItems; locally they were the same event loop as the listing, so a large backup used one
 * core. Messages go to the thread with the fewest in flight; a thread that cannot start or dies
 * leaves its messages to the in-process worker (`fallback`), so a backup never depends on
 * threads. The thread runs plain JavaScript (a thread with the TypeScript loader would take half
 * a second and another thread to start): the compiled package's module of item-block-thread.ts,
 * or, run from the sources, a bundle of it built with esbuild on first use and kept under
 * node_modules/.cache, named by the hash of the sources.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { TaskCallbacks } from '../../shared/ports/task-callbacks.js';
import type { FromThread, ThreadSettings, ToThread } from './item-block-thread-protocol.js';
import { runtimeFiles } from './runtime-files.js';

const ROOT = runtimeFiles.root;
const ENTRY = runtimeFiles.itemBlockThread;
/** The sources a bundle may contain. */
const SOURCE_DIRS = ['cli', 'functions', 'shared'];

const THREAD_START_TIMEOUT_MS = 30_000;

/**
 * Threads for a local backup's workers by default: the cores the listing leaves, at most 4; none
 * on two cores or fewer, where the one thread cost more than it gave: its own start-up (its
 * modules compiled again) and a copy of every message, on a core the apiserver of a local
 * cluster needs too. Measured on 2 cores, 10,030 objects, the built command, 4 alternating
 * pairs: 1.8 against 2.1 CPU-s, wall lower in every pair (median 5.1 s against 6.0 s).
 */
export function defaultItemBlockThreads(cores: number = availableParallelism()): number {
  return cores <= 2 ? 0 : Math.min(4, cores - 1);
}

/**
 * Names what a bundle is made of, as it is now: every TypeScript file it may contain (by path,
 * size and modification time: a stat each, not a read, as this runs while the backup starts),
 * the installed packages it bundles (npm's record of node_modules), tsconfig.json and esbuild's
 * version.
 */
async function sourceKey(esbuildVersion: string): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`esbuild ${esbuildVersion}\0`);
  const files: string[] = [];
  for (const dir of SOURCE_DIRS)
    for (const file of await readdir(join(ROOT, dir), { recursive: true }))
      if (file.endsWith('.ts')) files.push(join(dir, file));
  files.sort();
  files.push(join('node_modules', '.package-lock.json'), 'tsconfig.json');
  const stats = await Promise.all(files.map((f) => stat(join(ROOT, f)).catch(() => undefined)));
  files.forEach((file, i) => {
    hash.update(`${file}\0${stats[i]?.size}\0${stats[i]?.mtimeMs}\0`);
  });
  return hash.digest('hex').slice(0, 16);
}

const BUNDLE_PREFIX = 'item-block-thread-';

let bundling: Promise<string> | undefined;

/**
 * The thread's module: the compiled package's, or from the sources a bundle, built once per
 * change of what it is made of (per process, at most once).
 */
export function threadBundle(): Promise<string> {
  if (runtimeFiles.compiled) return Promise.resolve(ENTRY);
  bundling ??= (async () => {
    const esbuild = await import('esbuild');
    const name = `${BUNDLE_PREFIX}${await sourceKey(esbuild.version)}.cjs`;
    // Beside node_modules, so the bundle's require of the Kubernetes client resolves. Where that
    // cannot be written, the build fails and the workers run in process.
    const dir = join(ROOT, 'node_modules', '.cache', 'lifeboat');
    const out = join(dir, name);
    if (await exists(out)) return out;
    await mkdir(dir, { recursive: true });
    await writeInPlace(out, await bundledCode(esbuild));
    await removeOldBundles({ dir, name });
    return out;
  })();
  bundling.catch(() => {
    bundling = undefined;
  });
  return bundling;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The thread's code as one CommonJS file, or an error where it might behave otherwise there. */
async function bundledCode(esbuild: typeof import('esbuild')): Promise<Uint8Array> {
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'node',
    // CommonJS, so the thread loads it with require: an ES module would go through this
    // process's module loader hooks (tsx's, shared with every thread), at a cost of a second.
    format: 'cjs',
    target: 'node20',
    // Packages bundled too (one file to load), but for the Kubernetes client: large, and
    // required only for hooks and CSI.
    external: ['@kubernetes/client-node'],
    write: false,
    logLevel: 'silent',
  });
  // A warning (say, import.meta, empty in CommonJS) may mean code that behaves otherwise in
  // the thread: no bundle then, and the workers run in process.
  if (result.warnings.length > 0)
    throw new Error(`the worker thread bundle has warnings: ${result.warnings[0]?.text}`);
  const code = result.outputFiles[0]?.contents;
  if (!code) throw new Error('esbuild wrote no worker thread bundle');
  return code;
}

/** Written aside and renamed: a process starting at the same moment reads all or nothing. */
async function writeInPlace(out: string, code: Uint8Array): Promise<void> {
  const tmp = `${out}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(tmp, code);
  try {
    await rename(tmp, out);
  } catch (error) {
    // Another process may have renamed the same bundle into place first.
    await rm(tmp, { force: true });
    if (!(await exists(out))) throw error;
  }
}

/**
 * Bundles of earlier sources are no longer wanted; a `.tmp` is another process's bundle being
 * written, unless it is an hour old (its writer died).
 */
async function removeOldBundles(current: { readonly dir: string; readonly name: string }): Promise<void> {
  const { dir, name } = current;
  const now = Date.now();
  for (const old of await readdir(dir)) {
    if (!old.startsWith(BUNDLE_PREFIX) || old === name) continue;
    const path = join(dir, old);
    const stale =
      old.endsWith('.cjs') || now - ((await stat(path).catch(() => undefined))?.mtimeMs ?? now) > 3_600_000;
    if (stale) await rm(path, { force: true });
  }
}

/** A message backed up: its items' count, and the worker thread it ran in (none: this one). */
export interface Consumed {
  readonly items: number;
  readonly inThread: boolean;
  readonly thread?: number;
}

interface Pending {
  readonly resolve: (done: Consumed) => void;
  readonly reject: (error: unknown) => void;
}

interface Thread {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  /** Settles `ready`: the thread said it started, or it ended first. */
  readonly readiness: { readonly resolve: () => void; readonly reject: (error: Error) => void };
  readonly inFlight: Map<number, Pending>;
  /** Messages given to this thread that wait for it to start. */
  waiting: number;
  started: boolean;
  dead: boolean;
}

/** The record of a thread just made: nothing in flight, `ready` settled by its first word or end. */
function unstartedThread(worker: Worker): Thread {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const ready = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return {
    worker,
    inFlight: new Map<number, Pending>(),
    waiting: 0,
    started: false,
    dead: false,
    ready,
    readiness: { resolve, reject },
  };
}

/** A message's failure in a thread, as the in-process worker would have thrown it. */
export class ThreadedWorkerError extends Error {}

export class ItemBlockThreads {
  private readonly threads: Promise<Thread[]>;
  private nextId = 0;
  private closed = false;
  /**
   * Why no worker thread takes messages, once that is known: the bundle could not be built, no
   * thread could be made, or every thread ended before one started. Undefined once one starts.
   */
  readonly unavailable: Promise<string | undefined>;
  private settleUnavailable!: (reason: string | undefined) => void;
  /** Threads made and not yet ended before any started. */
  private starting = 0;

  constructor(
    private readonly options: {
      readonly count: number;
      readonly settings: ThreadSettings;
      readonly callbacks: TaskCallbacks;
      /** The in-process worker, for messages no thread can take. */
      readonly fallback: (body: string) => Promise<number>;
    },
  ) {
    this.unavailable = new Promise((resolve) => {
      this.settleUnavailable = resolve;
    });
    const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
    this.threads = threadBundle()
      .then((bundle) => {
        const threads: Thread[] = [];
        let failure: unknown;
        for (let i = 0; i < options.count && !this.closed; i++) {
          try {
            threads.push(this.spawn(bundle));
          } catch (error) {
            // A thread that cannot be made: the others (or this thread) take its share.
            failure ??= error;
          }
        }
        this.starting = threads.length;
        if (threads.length === 0 && failure !== undefined)
          this.settleUnavailable(`no worker thread could be made: ${reasonOf(failure)}`);
        return threads;
      })
      .catch((error: unknown) => {
        this.settleUnavailable(`the worker thread bundle could not be built: ${reasonOf(error)}`);
        return [];
      });
  }

  private spawn(bundle: string): Thread {
    const worker = new Worker(bundle, {
      workerData: this.options.settings,
      // Not this process's flags: the bundle is plain JavaScript, and a TypeScript loader or
      // source maps (tsx's --import) would cost the thread more than its work.
      execArgv: [],
      // This thread's heap limit: a message a thread cannot back up would fail here too (a
      // thread out of memory may end the process, as this thread's would).
      resourceLimits: { maxOldGenerationSizeMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20) },
    });
    const thread = unstartedThread(worker);
    thread.ready.catch(() => undefined);
    worker.on('message', (message: FromThread) => this.received(thread, message));
    this.giveUpUnlessStarted(thread);
    worker.on('error', (error) => this.die(thread, error));
    worker.on('exit', (code) => this.die(thread, new Error(`the worker thread exited (code ${code})`)));
    return thread;
  }

  private received(thread: Thread, message: FromThread): void {
    switch (message.type) {
      case 'ready':
        thread.started = true;
        this.settleUnavailable(undefined);
        thread.readiness.resolve();
        return;
      case 'callback':
        void (message.method === 'succeed'
          ? this.options.callbacks.succeed(message.token, message.output)
          : this.options.callbacks.fail(message.token, message.output as { name: string; cause: string }));
        return;
      case 'done':
      case 'failed': {
        const pending = thread.inFlight.get(message.id);
        thread.inFlight.delete(message.id);
        if (message.type === 'done')
          pending?.resolve({ items: message.items, inThread: true, thread: thread.worker.threadId });
        else
          pending?.reject(
            Object.assign(new ThreadedWorkerError(message.error.message), { name: message.error.name }),
          );
        return;
      }
    }
  }

  /** A thread that neither starts nor fails (it never should) is given up, never waited on. */
  private giveUpUnlessStarted(thread: Thread): void {
    const startup = setTimeout(() => {
      this.die(thread, new Error('the worker thread did not start'));
      void thread.worker.terminate();
    }, THREAD_START_TIMEOUT_MS);
    startup.unref();
    void thread.ready.then(
      () => clearTimeout(startup),
      () => clearTimeout(startup),
    );
  }

  private die(thread: Thread, error: Error): void {
    if (thread.dead) return;
    thread.dead = true;
    if (!thread.started && !this.closed && --this.starting === 0)
      this.settleUnavailable(`every worker thread ended before it started: ${error.message}`);
    thread.readiness.reject(error);
    // Its messages fail; the queue delivers them again, to another thread or in this one.
    for (const pending of thread.inFlight.values()) pending.reject(error);
    thread.inFlight.clear();
  }

  /**
   * Backs up one message in the least busy live thread (started threads first), or in this
   * thread when none is left; returns its items' count and where it ran.
   */
  async consume(body: string): Promise<Consumed> {
    const threads = await this.threads;
    for (;;) {
      if (this.closed) throw new Error('the worker threads are closed: the backup is over');
      // Chosen and counted in one go, so messages handed out at the same moment spread.
      const load = (t: Thread): number => t.inFlight.size + t.waiting + (t.started ? 0 : threads.length);
      const thread = threads.filter((t) => !t.dead).sort((a, b) => load(a) - load(b))[0];
      if (!thread) return { items: await this.options.fallback(body), inThread: false };
      thread.waiting++;
      try {
        await thread.ready;
      } catch {
        continue;
      } finally {
        thread.waiting--;
      }
      if (thread.dead) continue;
      const id = this.nextId++;
      return new Promise((resolve, reject) => {
        thread.inFlight.set(id, { resolve, reject });
        thread.worker.postMessage({ id, body } satisfies ToThread);
      });
    }
  }

  /**
   * Stops the threads (after the queue is idle: nothing is in flight then; what still is fails,
   * and nothing more is taken).
   */
  async close(): Promise<void> {
    this.closed = true;
    const threads = await this.threads;
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }
}
