/**
 * Throughput of file mode's content-defined chunker on this machine, side by side with SHA-256
 * over the same bytes (the hash every chunk gets anyway) and a plain copy: prints MB/s, the
 * ratios, and the chunk sizes found. `npx tsx test/bench/content-chunker-throughput.ts [MiB]`.
 */
import { createHash, randomFillSync } from 'node:crypto';
import { ContentChunker, FILE_CHUNKING } from '../../shared/domain/files/content-chunker.js';

const mib = Number(process.argv[2] ?? 512);
const piece = 1024 * 1024;
// Random data with a tenth of it repeated text: a boundary distribution like real files'.
const source = new Uint8Array(64 * piece);
randomFillSync(source);
const text = new TextEncoder().encode(
  'lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(2000),
);
for (let at = 0; at + text.length < source.length; at += 10 * text.length) source.set(text, at);

function measure(name: string, run: (data: Uint8Array) => void): number {
  const started = performance.now();
  for (let done = 0; done < mib; done++) {
    const at = (done % 64) * piece;
    run(source.subarray(at, at + piece));
  }
  const seconds = (performance.now() - started) / 1000;
  const mbs = (mib * piece) / 1e6 / seconds;
  console.log(`${name.padEnd(10)} ${mbs.toFixed(0).padStart(6)} MB/s`);
  return mbs;
}

const sizes: number[] = [];
const chunker = new ContentChunker(FILE_CHUNKING);
// Warm-up so the JIT has compiled the hot loop before measuring.
for (let i = 0; i < 32; i++) chunker.push(source.subarray(i * piece, (i + 1) * piece));
chunker.finish();

const chunking = measure('chunking', (data) => {
  for (const chunk of chunker.push(data)) sizes.push(chunk.length);
});
const hash = createHash('sha256');
const hashing = measure('sha-256', (data) => hash.update(data));
const sink = new Uint8Array(piece);
const copying = measure('copy', (data) => sink.set(data));

sizes.sort((a, b) => a - b);
const mean = sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length);
const at = (q: number): number => sizes[Math.min(sizes.length - 1, Math.floor(q * sizes.length))] ?? 0;
console.log(
  `chunking / sha-256 = ${(chunking / hashing).toFixed(2)}, chunking / copy = ${(chunking / copying).toFixed(2)}`,
);
console.log(
  `chunks ${sizes.length}: mean ${(mean / 1024).toFixed(0)} KiB, p10 ${(at(0.1) / 1024).toFixed(0)} KiB, ` +
    `median ${(at(0.5) / 1024).toFixed(0)} KiB, p90 ${(at(0.9) / 1024).toFixed(0)} KiB, ` +
    `max-size cuts ${sizes.filter((s) => s === FILE_CHUNKING.maxSize).length}`,
);
