/**
 * How long the `lifeboat` command takes to answer, against Node's own start, measured side by
 * side in one run: `node -e ''`, `lifeboat --help` and `lifeboat backup get --local` on an empty
 * backup directory, in alternating order, every run printed, then the medians and their ratios
 * to Node's start (DESIGN.md §7: ≤ 2× for --help, ≤ 3× for backup get).
 *   npm run bench:cli                    the compiled command (built first into dist/)
 *   npm run bench:cli -- 30              30 rounds (default 15)
 *   npm run bench:cli -- --bin FILE      another entry, e.g. the sources through tsx:
 *                                        --bin cli/bin/lifeboat-tsx.mjs
 * Peak memory (RSS) comes from /usr/bin/time when the machine has it, in runs of their own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..', '..');

interface Subject {
  readonly label: string;
  readonly argv: readonly string[];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** One run's wall time in milliseconds; a run that fails stops the benchmark. */
function timed(subject: Subject): number {
  const [command = '', ...args] = subject.argv;
  const started = performance.now();
  const run = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const elapsed = performance.now() - started;
  if (run.status !== 0)
    throw new Error(`${subject.label} exited with ${run.status ?? run.signal}: ${run.stderr.toString()}`);
  return elapsed;
}

/** Peak resident memory of one run, in MiB, when /usr/bin/time can tell. */
function peakRss(subject: Subject): string {
  if (!existsSync('/usr/bin/time')) return 'n/a';
  const run = spawnSync('/usr/bin/time', ['-f', '%M', ...subject.argv], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const kib = Number(run.stderr.toString().trim().split('\n').at(-1));
  return Number.isFinite(kib) ? `${(kib / 1024).toFixed(0)} MiB` : 'n/a';
}

/** The compiled command, built now so that it matches the sources. */
function builtBin(): string {
  const build = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'cli', 'build.ts')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error('npm run build failed');
  return join(ROOT, 'dist', 'lib', 'lifeboat.mjs');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { bin: { type: 'string' } },
  });
  const rounds = Number(positionals[0] ?? 15);
  const bin = values.bin ? resolve(values.bin) : builtBin();
  const empty = await mkdtemp(join(tmpdir(), 'lifeboat-bench-cli-'));
  try {
    const subjects: Subject[] = [
      { label: "node -e ''", argv: [process.execPath, '-e', ''] },
      { label: 'lifeboat --help', argv: [bin, '--help'] },
      { label: 'lifeboat backup get', argv: [bin, 'backup', 'get', '--local', '--dir', empty] },
    ];
    process.stdout.write(`${bin}, Node ${process.version}, ${rounds} rounds\n`);
    // One untimed run each: the file system cache warm for all three alike.
    for (const subject of subjects) timed(subject);
    const times = subjects.map(() => [] as number[]);
    for (let round = 0; round < rounds; round++) {
      // Each round starts with another subject, so none always runs first.
      const order = subjects.map((_, i) => (i + round) % subjects.length);
      const line: string[] = [];
      for (const i of order) {
        const ms = timed(subjects[i] as Subject);
        times[i]?.push(ms);
        line.push(`${subjects[i]?.label} ${ms.toFixed(0)} ms`);
      }
      process.stdout.write(`round ${String(round + 1).padStart(2)}: ${line.join(', ')}\n`);
    }
    const base = median(times[0] ?? []);
    process.stdout.write('\nmedian          ratio to node   peak RSS\n');
    subjects.forEach((subject, i) => {
      const m = median(times[i] ?? []);
      process.stdout.write(
        `${subject.label.padEnd(20)} ${m.toFixed(0).padStart(5)} ms   ${(m / base).toFixed(2).padStart(5)}×   ${peakRss(subject)}\n`,
      );
    });
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
}

await main();
