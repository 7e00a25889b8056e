/**
 * Names in file mode's tree format: Linux file names and symlink targets are bytes, not text, so
 * a name is kept as text when its bytes are valid UTF-8 that encodes back to them, else as
 * `{ base64 }` of the raw bytes. Pure.
 */

/**
 * A file or link name, or a symlink target: the bytes as text when they are valid UTF-8, else
 * `{ base64 }` of the raw bytes (Linux names are bytes, not text).
 */
export type RawName = string | { readonly base64: string };

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** A name's bytes. */
export function rawNameBytes(name: RawName): Uint8Array {
  if (typeof name === 'string') return encoder.encode(name);
  const binary = atob(name.base64);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** The name for some bytes: text when they are valid UTF-8 that encodes back to them. */
export function rawNameOf(bytes: Uint8Array): RawName {
  try {
    const text = strictDecoder.decode(bytes);
    const again = encoder.encode(text);
    if (again.length === bytes.length && again.every((b, i) => b === bytes[i])) return text;
  } catch {
    // not UTF-8: fall through to base64
  }
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return { base64: btoa(binary) };
}

/** Printable form for messages (never used to build a path). */
export function displayName(name: RawName): string {
  return typeof name === 'string' ? name : `base64:${name.base64}`;
}

/** Orders names by their bytes, as the walk lists them. */
export function compareRawNames(a: RawName, b: RawName): number {
  const x = rawNameBytes(a);
  const y = rawNameBytes(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i] as number) - (y[i] as number);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
