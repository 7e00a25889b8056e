/**
 * The data set of `npm run bench:peers`, the same bytes on every run (fixed seeds): at scale 1,
 * 20,000 small files of 1–64 KiB (skewed small; 60% text, 40% random) in 100 directories,
 * 20 random files of 20 MiB, 5 JSON logs of 50 MiB and a 64 MiB sparse file holding 4 MiB of data,
 * about 1.1 GB in 20,026 files. A smaller scale divides the counts (at least one of each).
 * `changeFiles` then rewrites 1% of the small files in place (same size, new bytes and mtime).
 */
import { createCipheriv } from 'node:crypto';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const KiB = 1024;
const MiB = 1024 * KiB;

/** A small seeded generator (mulberry32). */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Incompressible bytes, the same for the same seed (AES-CTR of zeros). */
function randomBytes(seed: number, length: number): Buffer {
  const key = Buffer.alloc(32);
  key.writeUInt32LE(seed >>> 0, 0);
  return createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(length));
}

const WORDS = (
  'the backup volume restore snapshot cluster namespace pod deployment service config secret ' +
  'node storage class claim bucket object pack index chunk manifest retention schedule hook ' +
  'replica controller status ready error warning info debug request response latency bytes'
).split(' ');

/** Text of about `length` bytes: words in seeded order, lines of 8–16 words. */
function text(seed: number, length: number): Buffer {
  const next = generator(seed);
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const words = 8 + Math.floor(next() * 9);
    const line = `${Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ')}\n`;
    parts.push(line);
    size += line.length;
  }
  return Buffer.from(parts.join('')).subarray(0, length);
}

/** JSON log lines of about `length` bytes. */
function jsonLog(seed: number, length: number): Buffer {
  const next = generator(seed);
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < length; i++) {
    const line = `${JSON.stringify({
      ts: new Date(1_790_000_000_000 + i * 137).toISOString(),
      level: ['info', 'debug', 'warn', 'error'][Math.floor(next() * 4)],
      msg: `${WORDS[Math.floor(next() * WORDS.length)]} ${WORDS[Math.floor(next() * WORDS.length)]}`,
      request: Math.floor(next() * 1e9).toString(16),
      latencyMs: Math.floor(next() * 5000) / 10,
      n: i,
    })}\n`;
    parts.push(line);
    size += line.length;
  }
  return Buffer.from(parts.join('')).subarray(0, length);
}

export interface DataSetShape {
  readonly smallFiles: number;
  readonly randomFiles: number;
  readonly logFiles: number;
}

export function shapeAt(scale: number): DataSetShape {
  const count = (n: number): number => Math.max(1, Math.round(n * scale));
  return { smallFiles: count(20_000), randomFiles: count(20), logFiles: count(5) };
}

const smallPath = (root: string, i: number): string =>
  join(root, `d${String(i % 100).padStart(2, '0')}`, `f${String(i).padStart(5, '0')}.dat`);

function smallContent(i: number): Buffer {
  const next = generator(1_000_003 * (i + 1));
  const size = KiB + Math.floor(63 * KiB * next() ** 3);
  return next() < 0.6 ? text(i + 7, size) : randomBytes(i + 7, size);
}

/** Writes the data set under `root` (which must be empty or missing); returns its bytes. */
export async function writeDataSet(root: string, shape: DataSetShape): Promise<number> {
  let bytes = 0;
  for (let d = 0; d < Math.min(100, shape.smallFiles); d++)
    await mkdir(join(root, `d${String(d).padStart(2, '0')}`), { recursive: true });
  for (let i = 0; i < shape.smallFiles; i++) {
    const content = smallContent(i);
    await writeFile(smallPath(root, i), content);
    bytes += content.length;
  }
  await mkdir(join(root, 'large'), { recursive: true });
  for (let i = 0; i < shape.randomFiles; i++) {
    await writeFile(join(root, 'large', `random-${i}.bin`), randomBytes(5000 + i, 20 * MiB));
    bytes += 20 * MiB;
  }
  for (let i = 0; i < shape.logFiles; i++) {
    await writeFile(join(root, 'large', `log-${i}.json`), jsonLog(9000 + i, 50 * MiB));
    bytes += 50 * MiB;
  }
  const sparse = await open(join(root, 'large', 'sparse.img'), 'w');
  try {
    await sparse.truncate(64 * MiB);
    for (let i = 0; i < 4; i++) await sparse.write(randomBytes(7000 + i, MiB), 0, MiB, (i * 16 + 3) * MiB);
  } finally {
    await sparse.close();
  }
  return bytes + 64 * MiB;
}

/** Rewrites every hundredth small file in place: its middle bytes replaced, its size kept. */
export async function changeFiles(root: string, shape: DataSetShape): Promise<number> {
  let changed = 0;
  for (let i = 50; i < shape.smallFiles; i += 100) {
    const content = smallContent(i);
    randomBytes(424_242 + i, 256).copy(content, Math.floor(content.length / 2));
    await writeFile(smallPath(root, i), content);
    changed++;
  }
  return changed;
}
