/**
 * Byte helpers for the repository's binary formats (packs and indexes): hex ids, big-endian
 * integers, ordering of fixed-size ids. Pure; never allocates more than the caller asks for.
 */

const HEX = '0123456789abcdef';

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += HEX[b >> 4] + (HEX[b & 15] as string);
  return out;
}

/** Lowercase hex of an even length to bytes; undefined for anything else. */
export function fromHex(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || !/^[0-9a-f]*$/.test(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Orders two byte ranges of the same length: negative, zero or positive. */
export function compareBytes(options: {
  a: Uint8Array;
  aOffset: number;
  b: Uint8Array;
  bOffset: number;
  length: number;
}): number {
  const { a, aOffset, b, bOffset, length } = options;
  for (let i = 0; i < length; i++) {
    const d = (a[aOffset + i] as number) - (b[bOffset + i] as number);
    if (d !== 0) return d;
  }
  return 0;
}

export function writeU32(target: Uint8Array, offset: number, value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff)
    throw new RangeError(`u32 out of range: ${value}`);
  target[offset] = value >>> 24;
  target[offset + 1] = (value >>> 16) & 0xff;
  target[offset + 2] = (value >>> 8) & 0xff;
  target[offset + 3] = value & 0xff;
}

export function readU32(source: Uint8Array, offset: number): number {
  if (offset + 4 > source.length) throw new RangeError('read past the end');
  return (
    (source[offset] as number) * 0x1000000 +
    (((source[offset + 1] as number) << 16) |
      ((source[offset + 2] as number) << 8) |
      (source[offset + 3] as number))
  );
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0x7f;
  return out;
}
