import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ChunkingParams,
  ContentChunker,
  chunkStream,
  FILE_CHUNKING,
} from '../../../../../shared/domain/files/content-chunker.js';

/** Small sizes so a property run sees many chunks in little data; the same code as 512K/1M/4M. */
const SMALL: ChunkingParams = { minSize: 256, avgSize: 1024, maxSize: 4096, normalization: 2 };

/** Deterministic pseudo-random bytes (xorshift32), so fast-check shrinks seeds, not megabytes. */
function randomBytes(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** Chunks data fed in pieces of the given sizes (cycled). */
function chunksOf(data: Uint8Array, pieces: readonly number[] = [data.length], params = SMALL): Uint8Array[] {
  const chunker = new ContentChunker(params);
  const out: Uint8Array[] = [];
  let at = 0;
  for (let i = 0; at < data.length; i++) {
    const size = Math.max(1, pieces[i % pieces.length] ?? data.length);
    out.push(...chunker.push(data.subarray(at, at + size)));
    at += size;
  }
  const last = chunker.finish();
  if (last) out.push(last);
  return out;
}

function boundaries(chunks: readonly Uint8Array[]): number[] {
  let offset = 0;
  return chunks.map((c) => {
    offset += c.length;
    return offset;
  });
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Byte equality without the deep-equality walk, which is slow on large typed arrays. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

describe('content-defined chunking', () => {
  it('gives back the input when its chunks are concatenated, however the stream is fed', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 0, max: 40_000 }),
        fc.array(fc.integer({ min: 1, max: 9000 }), { minLength: 1, maxLength: 8 }),
        (seed, length, pieces) => {
          // Prepare
          const data = randomBytes(seed, length);
          // Act
          const chunks = chunksOf(data, pieces);
          // Assess
          expect(sameBytes(concat(chunks), data)).toBe(true);
          expect(boundaries(chunks)).toEqual(boundaries(chunksOf(data)));
        },
      ),
    );
  });

  it('keeps every chunk within the size bounds, only the last one shorter than the minimum', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 1, max: 60_000 }), (seed, length) => {
        const chunks = chunksOf(randomBytes(seed, length), [997]);
        for (const [i, chunk] of chunks.entries()) {
          expect(chunk.length).toBeLessThanOrEqual(SMALL.maxSize);
          expect(chunk.length).toBeGreaterThan(0);
          if (i < chunks.length - 1) expect(chunk.length).toBeGreaterThanOrEqual(SMALL.minSize);
        }
      }),
    );
  });

  it('moves only the chunks near an insertion: boundaries before it stay, and far after it shift by its length', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 0, max: 32 * 1024 }),
        fc.integer({ min: 1, max: 300 }),
        (seed, at, inserted) => {
          // Prepare
          const data = randomBytes(seed, 96 * 1024);
          const edited = new Uint8Array(data.length + inserted);
          edited.set(data.subarray(0, at));
          edited.set(randomBytes(seed ^ 0x5bd1e995, inserted), at);
          edited.set(data.subarray(at), at + inserted);
          // Act
          const before = boundaries(chunksOf(data, [4000]));
          const after = new Set(boundaries(chunksOf(edited, [3000])));
          // Assess: cut points before the edit are unchanged; far after it (10 maximum chunks, which
          // resynchronization needs far less than, see the next test) every one is found shifted.
          for (const b of before.filter((b) => b <= at)) expect(after.has(b)).toBe(true);
          const far = before.filter((b) => b > at + 10 * SMALL.maxSize);
          expect(far.length).toBeGreaterThan(3);
          for (const b of far) expect(after.has(b + inserted)).toBe(true);
        },
      ),
    );
  });

  it('stays in step after the first boundary shared past an insertion', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 0, max: 16 * 1024 }),
        fc.integer({ min: 1, max: 300 }),
        (seed, at, inserted) => {
          const data = randomBytes(seed, 48 * 1024);
          const edited = new Uint8Array(data.length + inserted);
          edited.set(data.subarray(0, at));
          edited.set(randomBytes(~seed, inserted), at);
          edited.set(data.subarray(at), at + inserted);
          const before = boundaries(chunksOf(data));
          const after = new Set(boundaries(chunksOf(edited)).map((b) => b - inserted));
          const firstShared = before.findIndex((b) => b > at && after.has(b));
          if (firstShared >= 0) for (const b of before.slice(firstShared)) expect(after.has(b)).toBe(true);
        },
      ),
    );
  });

  it('cuts content without boundaries (zeros) at the maximum size', () => {
    const chunks = chunksOf(new Uint8Array(3 * SMALL.maxSize + 100));
    expect(chunks.map((c) => c.length)).toEqual([SMALL.maxSize, SMALL.maxSize, SMALL.maxSize, 100]);
  });

  it('averages near the target size on random data', () => {
    const chunks = chunksOf(randomBytes(7, 2 * 1024 * 1024), [65536]);
    const mean = (2 * 1024 * 1024) / chunks.length;
    expect(mean).toBeGreaterThan(SMALL.avgSize);
    expect(mean).toBeLessThan(1.5 * SMALL.avgSize);
  });

  it('hands out copies, never a view of the caller’s buffer', () => {
    const chunker = new ContentChunker(SMALL);
    const buffer = randomBytes(3, 20_000);
    const chunks = chunker.push(buffer);
    const copy = chunks.map((c) => c.slice());
    buffer.fill(0);
    expect(chunks.every((c, i) => sameBytes(c, copy[i] ?? new Uint8Array()))).toBe(true);
    expect(chunks.every((c) => c.buffer !== buffer.buffer)).toBe(true);
  });

  it('cuts the same boundaries from an async stream as from pushes', async () => {
    const data = randomBytes(11, 50_000);
    async function* source(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < data.length; at += 4321) yield data.subarray(at, at + 4321);
    }
    const streamed: Uint8Array[] = [];
    for await (const chunk of chunkStream(source(), SMALL)) streamed.push(chunk);
    expect(boundaries(streamed)).toEqual(boundaries(chunksOf(data)));
  });

  it('cuts every file as a fresh chunker would when one chunker is reused from file to file', () => {
    const file = fc.record({
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      length: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 3 * SMALL.maxSize })),
      pieces: fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 4 }),
      /** Left midway (a file that vanished while read), then reset, before the next file. */
      abandonedAfter: fc.option(fc.integer({ min: 1, max: 2 * SMALL.maxSize }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(file, { minLength: 1, maxLength: 12 }), (files) => {
        // Prepare
        const reused = new ContentChunker(SMALL);
        for (const f of files) {
          const data = randomBytes(f.seed, f.length);
          // Act: the reused chunker, fed as a backup feeds it (reset first), in the file's pieces.
          reused.reset();
          const got: Uint8Array[] = [];
          let at = 0;
          for (let i = 0; at < data.length; i++) {
            const size = f.pieces[i % f.pieces.length] ?? 1;
            got.push(...reused.push(data.subarray(at, at + size)));
            at += size;
            if (f.abandonedAfter !== undefined && at >= f.abandonedAfter) break;
          }
          if (at < data.length) continue; // abandoned: the next file resets
          const last = reused.finish();
          if (last) got.push(last);
          // Assess: the boundaries and bytes of a fresh chunker per file.
          const fresh = chunksOf(data);
          expect(boundaries(got)).toEqual(boundaries(fresh));
          expect(sameBytes(concat(got), data)).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('uses 512 KiB / 1 MiB / 4 MiB for file mode', () => {
    expect(FILE_CHUNKING).toEqual({
      minSize: 512 * 1024,
      avgSize: 1024 * 1024,
      maxSize: 4 * 1024 * 1024,
      normalization: 2,
    });
    const chunks = chunksOf(randomBytes(5, 9 * 1024 * 1024), [1 << 20], FILE_CHUNKING);
    expect(concat(chunks).length).toBe(9 * 1024 * 1024);
    for (const c of chunks.slice(0, -1)) expect(c.length).toBeGreaterThanOrEqual(FILE_CHUNKING.minSize);
  });

  it.each([
    [{ ...SMALL, avgSize: 1000 }, 'avgSize must be a power of two'],
    [{ ...SMALL, minSize: 2048 }, 'minSize must be an integer from 64 to avgSize'],
    [{ ...SMALL, maxSize: 512 }, 'maxSize must be an integer of at least avgSize'],
    [{ ...SMALL, normalization: 10 }, 'normalization must be a small non-negative integer'],
    [{ ...SMALL, avgSize: 2 ** 30, maxSize: 2 ** 31 }, 'avgSize is too large'],
  ])('refuses parameters %o naming the field', (params, message) => {
    expect(() => new ContentChunker(params)).toThrow(message);
  });
});
