/**
 * Content-defined chunking for the data mover's file mode: FastCDC's gear hash with normalized
 * chunking (Xia et al., "FastCDC", USENIX ATC 2016), fed incrementally so memory stays bounded by
 * one maximum-size chunk whatever the stream's length. Boundaries depend on the last 32 bytes
 * before them (the gear hash's window), so an insertion or deletion moves only the chunks around
 * it and later chunks deduplicate against an earlier snapshot.
 *
 * The gear table and the parameters are part of the repository format (docs/file-mode.md):
 * changing them breaks no snapshot, it only stops new chunks deduplicating against old ones.
 * One chunker serves any number of streams one after another (`finish` or `reset` between them):
 * its buffer is allocated once, never per stream (a backup of 20,000 small files would otherwise
 * zero-fill a 4 MiB buffer for each).
 * Never: hold more than one chunk's bytes, or hand out a view of a caller's buffer (callers reuse
 * their read buffers).
 */
import { LifeboatError } from '../errors.js';

export interface ChunkingParams {
  /** No boundary before this many bytes of a chunk (those bytes are not even hashed). */
  readonly minSize: number;
  /** The target average; a power of two. */
  readonly avgSize: number;
  /** A chunk is cut here whatever its content. */
  readonly maxSize: number;
  /**
   * FastCDC's normalization level: before `avgSize` the mask has this many more bits, after it
   * this many fewer, which narrows the size distribution around the average.
   */
  readonly normalization: number;
}

/**
 * The algorithm's name as a repository records it with its sizes: FastCDC over this module's
 * 32-bit gear table, with normalization level 2.
 */
export const FILE_CHUNKING_ALGORITHM = 'fastcdc-gear32-nc2';

/** File mode's chunking: 512 KiB / 1 MiB / 4 MiB, normalization level 2. */
export const FILE_CHUNKING: ChunkingParams = {
  minSize: 512 * 1024,
  avgSize: 1024 * 1024,
  maxSize: 4 * 1024 * 1024,
  normalization: 2,
};

/**
 * The gear table: 256 pseudo-random 32-bit values, murmur3's finalizer over a Weyl sequence
 * (golden-ratio increments). Fixed, so every writer cuts identical data identically.
 */
const GEAR: Int32Array = (() => {
  const table = new Int32Array(256);
  let state = 0x4c1f_eb0a | 0;
  for (let i = 0; i < 256; i++) {
    state = (state + 0x9e37_79b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85eb_ca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2_ae35);
    table[i] = z ^ (z >>> 16);
  }
  return table;
})();

/** A mask of the hash's top `bits` bits: with a left-shifting gear hash these see the whole window. */
function topBits(bits: number): number {
  return (0xffff_ffff << (32 - bits)) | 0;
}

function validated(params: ChunkingParams): { maskS: number; maskL: number } {
  const { minSize, avgSize, maxSize, normalization } = params;
  const bits = Math.log2(avgSize);
  const problem = (field: string, message: string): LifeboatError =>
    new LifeboatError(`invalid chunking parameters: ${field} ${message}`);
  if (!Number.isInteger(bits)) throw problem('avgSize', `must be a power of two, got ${avgSize}`);
  if (!Number.isInteger(minSize) || minSize < 64 || minSize > avgSize)
    throw problem('minSize', `must be an integer from 64 to avgSize, got ${minSize}`);
  if (!Number.isInteger(maxSize) || maxSize < avgSize)
    throw problem('maxSize', `must be an integer of at least avgSize, got ${maxSize}`);
  if (!Number.isInteger(normalization) || normalization < 0 || bits - normalization < 1)
    throw problem('normalization', `must be a small non-negative integer, got ${normalization}`);
  if (bits + normalization > 31)
    throw problem('avgSize', `is too large for a 32-bit gear hash at this normalization`);
  return { maskS: topBits(bits + normalization), maskL: topBits(bits - normalization) };
}

/**
 * Cuts a byte stream into content-defined chunks. `push` returns the chunks completed by the bytes
 * given (each a fresh array); `finish` returns the last, shorter chunk if any bytes are left.
 */
export class ContentChunker {
  private readonly minSize: number;
  private readonly normalSize: number;
  private readonly maxSize: number;
  private readonly maskS: number;
  private readonly maskL: number;
  /**
   * The current chunk's bytes so far: grown on demand up to one maximum-size chunk and kept, so a
   * chunker reused across files (reset between them) allocates nothing per file.
   */
  private pending = new Uint8Array(0);
  private length = 0;
  private hash = 0;

  constructor(params: ChunkingParams = FILE_CHUNKING) {
    const { maskS, maskL } = validated(params);
    this.minSize = params.minSize;
    this.normalSize = params.avgSize;
    this.maxSize = params.maxSize;
    this.maskS = maskS;
    this.maskL = maskL;
  }

  /** Drops the current chunk's bytes: the next push starts a new stream (a file abandoned midway). */
  reset(): void {
    this.length = 0;
    this.hash = 0;
  }

  /** Copies bytes after the current chunk's, growing its buffer (never past the maximum size). */
  private keep(bytes: Uint8Array): void {
    const needed = this.length + bytes.length;
    if (needed > this.pending.length) {
      const grown = new Uint8Array(
        Math.min(this.maxSize, Math.max(needed, this.pending.length * 2, 64 * 1024)),
      );
      grown.set(this.pending.subarray(0, this.length));
      this.pending = grown;
    }
    this.pending.set(bytes, this.length);
    this.length = needed;
  }

  push(data: Uint8Array): Uint8Array[] {
    const chunks: Uint8Array[] = [];
    let start = 0;
    while (start < data.length) {
      const end = this.scan(data, start);
      if (end < 0) {
        this.keep(data.subarray(start));
        break;
      }
      const chunk = new Uint8Array(this.length + end - start);
      chunk.set(this.pending.subarray(0, this.length));
      chunk.set(data.subarray(start, end), this.length);
      chunks.push(chunk);
      this.length = 0;
      this.hash = 0;
      start = end;
    }
    return chunks;
  }

  finish(): Uint8Array | undefined {
    if (this.length === 0) return undefined;
    const chunk = this.pending.slice(0, this.length);
    this.length = 0;
    this.hash = 0;
    return chunk;
  }

  /**
   * Where in `data` (from `start`) the current chunk ends, exclusive, or -1 when it goes on past
   * `data`; the hash is saved for the next call in that case. Hot loop: locals only.
   */
  private scan(data: Uint8Array, start: number): number {
    const gear = GEAR;
    const n = data.length;
    // The chunk's length so far when data[i] is next is base + i.
    const base = this.length - start;
    let i = start;
    if (base + i < this.minSize) {
      // FastCDC's cut-point skipping: the first minSize bytes are never a boundary, so not hashed.
      i = Math.min(n, this.minSize - base);
      if (base + i < this.minSize) return -1;
    }
    let h = this.hash;
    const maskS = this.maskS;
    const strictEnd = Math.min(n, this.normalSize - base);
    while (i < strictEnd) {
      h = ((h << 1) + (gear[data[i] as number] as number)) | 0;
      i++;
      if ((h & maskS) === 0) return i;
    }
    const maskL = this.maskL;
    const looseEnd = Math.min(n, this.maxSize - base);
    while (i < looseEnd) {
      h = ((h << 1) + (gear[data[i] as number] as number)) | 0;
      i++;
      if ((h & maskL) === 0) return i;
    }
    if (base + i >= this.maxSize) return i;
    this.hash = h;
    return -1;
  }
}

/** Chunks an async byte stream; at most one maximum-size chunk plus the source's piece is held. */
export async function* chunkStream(
  source: AsyncIterable<Uint8Array>,
  params: ChunkingParams = FILE_CHUNKING,
): AsyncGenerator<Uint8Array> {
  const chunker = new ContentChunker(params);
  for await (const data of source) yield* chunker.push(data);
  const last = chunker.finish();
  if (last) yield last;
}
