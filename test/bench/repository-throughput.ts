/**
 * The data mover repository's own cost, against plain writes of the same bytes to the same store
 * in one run: N MiB of 512 KiB blocks (random, compressible text, duplicates) put through one
 * writer with concurrent callers, then read back with getBlob; the baseline writes the same
 * bytes as 16 MiB objects with the same upload concurrency. Prints MB/s, ratios, dedup and
 * compression; never asserts timings. Local directory store in a temp dir:
 *   npx tsx test/bench/repository-throughput.ts 512
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { LocalDirectoryStore } from '../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../shared/adapters/local-key-wrapper.js';
import { openRepository } from '../../shared/adapters/repository/open-repository.js';

const MiB = 1024 * 1024;
const BLOCK = 512 * 1024;
const CALLERS = 8;
const UPLOADS = 4;

function blocksOf(totalMiB: number): Uint8Array[] {
  const count = (totalMiB * MiB) / BLOCK;
  const line = Buffer.from(
    '2026-01-01T00:00:00Z level=info msg="request served" path=/api/v1/items status=200\n',
  );
  const text = Buffer.alloc(BLOCK);
  for (let at = 0; at < BLOCK; at += line.length) line.copy(text, at);
  const out: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const kind = i % 10;
    if (kind < 5)
      out.push(randomBytes(BLOCK)); // half random (already compressed data)
    else if (kind < 8) {
      const b = Buffer.from(text);
      b.writeUInt32BE(i, 0); // distinct, compressible
      out.push(b);
    } else out.push(out[Math.max(0, i - 7)] as Uint8Array); // duplicates of earlier blocks
  }
  return out;
}

/** Wall time, and CPU time of the whole process (zlib's thread pool included): steadier on a busy machine. */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number; cpuSeconds: number }> {
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const value = await fn();
  const used = process.cpuUsage(cpu);
  return {
    value,
    seconds: Number(process.hrtime.bigint() - start) / 1e9,
    cpuSeconds: (used.user + used.system) / 1e6,
  };
}

async function main(): Promise<void> {
  const totalMiB = Number(process.argv[2] ?? 256);
  const blocks = blocksOf(totalMiB);
  const bytes = blocks.length * BLOCK;
  const root = await mkdtemp(join(tmpdir(), 'repo-bench-'));
  try {
    const store = new LocalDirectoryStore(root);
    const raw = await timed(async () => {
      const limit = pLimit(UPLOADS);
      const perObject = (16 * MiB) / BLOCK;
      const tasks: Promise<void>[] = [];
      for (let i = 0; i < blocks.length; i += perObject)
        tasks.push(limit(() => store.put(`raw/${i}`, Buffer.concat(blocks.slice(i, i + perObject)))));
      await Promise.all(tasks);
    });
    const repo = await openRepository({
      store,
      keys: new LocalKeyWrapper(randomBytes(32)),
      uploadConcurrency: UPLOADS,
    });
    const writer = repo.writer();
    const ids: string[] = new Array(blocks.length);
    const put = await timed(async () => {
      const limit = pLimit(CALLERS);
      await Promise.all(
        blocks.map((b, i) =>
          limit(async () => {
            ids[i] = (await writer.putBlob(b)).id;
          }),
        ),
      );
      await writer.flush();
    });
    await writer.close();
    const stats = writer.stats();
    const get = await timed(async () => {
      const limit = pLimit(CALLERS);
      await Promise.all(ids.map((id) => limit(() => repo.getBlob(id))));
    });
    const mbps = (s: number): string => (bytes / MiB / s).toFixed(0);
    const cpu = (t: { cpuSeconds: number }): string =>
      `${((t.cpuSeconds * 1000) / (bytes / MiB)).toFixed(1)} ms CPU/MiB`;
    console.log(
      `blocks ${blocks.length} × 512 KiB = ${totalMiB} MiB, ${CALLERS} callers, ${UPLOADS} uploads at once`,
    );
    console.log(`raw writes of the same bytes: ${mbps(raw.seconds)} MB/s, ${cpu(raw)}`);
    console.log(
      `putBlob + flush:             ${mbps(put.seconds)} MB/s, ${cpu(put)}  (ratio to raw ${(raw.seconds / put.seconds).toFixed(2)})`,
    );
    console.log(`getBlob (checked):           ${mbps(get.seconds)} MB/s, ${cpu(get)}`);
    console.log(
      `stored ${stats.blobsStored} blobs, deduplicated ${stats.blobsDeduplicated}; ` +
        `compression ${(stats.rawBytes / stats.storedBytes).toFixed(2)}× on stored blobs; ${stats.packsWritten} packs; ` +
        `peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
