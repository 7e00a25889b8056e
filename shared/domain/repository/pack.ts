/**
 * The layout of a pack object: many blobs in one storage object, self-describing so a pack that
 * no index covers yet (its writer was killed in between) can be indexed from its own header.
 *
 *   "LBPACK01" | u32 sealed header length | sealed header | blob record | blob record | ...
 *
 * The header lists every blob (id, absolute offset, stored length, plaintext length, whether it
 * is compressed) and is sealed (encrypted and authenticated) by the caller; each blob record is
 * sealed too. This module only lays bytes out and reads them back; it never sees keys, and it
 * never trusts a header's offsets without checking them against the pack's length.
 */
import { asciiBytes, compareBytes, fromHex, readU32, toHex, writeU32 } from './bytes.js';

export const PACK_MAGIC = 'LBPACK01';
const MAGIC_BYTES = asciiBytes(PACK_MAGIC);
/** Magic and the sealed header's length: what a reader fetches before the header. */
export const PACK_PREFIX_BYTES = MAGIC_BYTES.length + 4;
export const BLOB_ID_BYTES = 32;
export const PACK_ID_BYTES = 16;
const HEADER_ENTRY_BYTES = BLOB_ID_BYTES + 4 + 4 + 4 + 1;
const FLAG_COMPRESSED = 1;

/** Where one blob lies in its pack, and how to turn its record back into plaintext. */
export interface PackEntry {
  /** The blob id, lowercase hex. */
  readonly id: string;
  /** Absolute offset of the sealed record in the pack. */
  readonly offset: number;
  /** Length of the sealed record. */
  readonly length: number;
  /** Length of the plaintext (before compression). */
  readonly rawLength: number;
  readonly compressed: boolean;
}

/** A blob record ready for a pack: already compressed (or not) and sealed; its bytes are the caller's. */
export interface PackRecord {
  readonly id: string;
  readonly sealedLength: number;
  readonly rawLength: number;
  readonly compressed: boolean;
}

export class PackFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PackFormatError';
  }
}

export function packHeaderPlainBytes(count: number): number {
  return 4 + HEADER_ENTRY_BYTES * count;
}

/**
 * Places records after a header whose sealed form is `sealOverhead` bytes longer than its
 * plaintext, so offsets are known before the header is sealed.
 */
export function layoutPack(options: { records: readonly PackRecord[]; sealOverhead: number }): {
  entries: PackEntry[];
  dataStart: number;
  totalBytes: number;
} {
  const dataStart = PACK_PREFIX_BYTES + packHeaderPlainBytes(options.records.length) + options.sealOverhead;
  let at = dataStart;
  const entries = options.records.map((r) => {
    const entry: PackEntry = {
      id: r.id,
      offset: at,
      length: r.sealedLength,
      rawLength: r.rawLength,
      compressed: r.compressed,
    };
    at += r.sealedLength;
    return entry;
  });
  return { entries, dataStart, totalBytes: at };
}

export function encodePackHeader(entries: readonly PackEntry[]): Uint8Array {
  const out = new Uint8Array(packHeaderPlainBytes(entries.length));
  writeU32(out, 0, entries.length);
  entries.forEach((e, i) => {
    const at = 4 + i * HEADER_ENTRY_BYTES;
    const id = fromHex(e.id);
    if (!id || id.length !== BLOB_ID_BYTES) throw new PackFormatError(`not a blob id: ${e.id}`);
    out.set(id, at);
    writeU32(out, at + 32, e.offset);
    writeU32(out, at + 36, e.length);
    writeU32(out, at + 40, e.rawLength);
    out[at + 44] = e.compressed ? FLAG_COMPRESSED : 0;
  });
  return out;
}

/** The header's entries; every record must lie after the header and inside the pack. */
export function decodePackHeader(options: {
  header: Uint8Array;
  dataStart: number;
  packBytes?: number;
}): PackEntry[] {
  const { header, dataStart, packBytes } = options;
  if (header.length < 4) throw new PackFormatError('pack header too short');
  const count = readU32(header, 0);
  if (header.length !== packHeaderPlainBytes(count))
    throw new PackFormatError(`pack header of ${header.length} bytes cannot list ${count} blobs`);
  const entries: PackEntry[] = [];
  for (let i = 0; i < count; i++) {
    const at = 4 + i * HEADER_ENTRY_BYTES;
    const entry: PackEntry = {
      id: toHex(header.subarray(at, at + 32)),
      offset: readU32(header, at + 32),
      length: readU32(header, at + 36),
      rawLength: readU32(header, at + 40),
      compressed: ((header[at + 44] as number) & FLAG_COMPRESSED) !== 0,
    };
    if (entry.offset < dataStart || (packBytes !== undefined && entry.offset + entry.length > packBytes))
      throw new PackFormatError(`blob ${entry.id} lies outside its pack`);
    entries.push(entry);
  }
  return entries;
}

export function encodePackPrefix(sealedHeaderLength: number): Uint8Array {
  const out = new Uint8Array(PACK_PREFIX_BYTES);
  out.set(MAGIC_BYTES, 0);
  writeU32(out, MAGIC_BYTES.length, sealedHeaderLength);
  return out;
}

/** The sealed header's length, from a pack's first bytes. */
export function decodePackPrefix(bytes: Uint8Array): { sealedHeaderLength: number; headerStart: number } {
  if (
    bytes.length < PACK_PREFIX_BYTES ||
    compareBytes({ a: bytes, aOffset: 0, b: MAGIC_BYTES, bOffset: 0, length: MAGIC_BYTES.length }) !== 0
  )
    throw new PackFormatError('not a Lifeboat pack (magic missing)');
  return { sealedHeaderLength: readU32(bytes, MAGIC_BYTES.length), headerStart: PACK_PREFIX_BYTES };
}
