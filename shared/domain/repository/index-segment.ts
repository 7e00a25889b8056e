/**
 * Index objects and their decoded form, the IndexSegment: a sorted table of fixed-size records
 * (binary search, about 50 bytes a blob in memory) with a table of the packs they cover. Pure:
 * encoding, decoding with its checks, lookup.
 *
 *   "LBIDX001" | u32 pack count | (pack id 16 | u32 pack bytes)* | u32 record count | record*
 *   record = blob id 32 | u32 pack number | u32 offset | u32 length | u32 plaintext length | u8 flags
 *
 * Never: a record whose pack is not in its table, records out of order, two records of one id
 * in one table.
 */
import { asciiBytes, compareBytes, fromHex, readU32, toHex, writeU32 } from './bytes.js';
import { BLOB_ID_BYTES, PACK_ID_BYTES, type PackEntry, PackFormatError } from './pack.js';

export const INDEX_MAGIC = 'LBIDX001';
const MAGIC_BYTES = asciiBytes(INDEX_MAGIC);
export const INDEX_RECORD_BYTES = BLOB_ID_BYTES + 4 * 4 + 1;
const PACK_ROW_BYTES = PACK_ID_BYTES + 4;
const FLAG_COMPRESSED = 1;

export interface PackInfo {
  /** Lowercase hex, 32 characters. */
  readonly id: string;
  readonly bytes: number;
}

export interface BlobLocation extends PackEntry {
  readonly packId: string;
}

/** One sorted table: the decoded form of an index object, or several merged. */
export interface IndexSegment {
  readonly packs: readonly PackInfo[];
  /** `count` records of INDEX_RECORD_BYTES, sorted by blob id, ids unique. */
  readonly records: Uint8Array;
  readonly count: number;
}

export const EMPTY_SEGMENT: IndexSegment = { packs: [], records: new Uint8Array(0), count: 0 };

function recordAt(segment: IndexSegment, i: number): BlobLocation {
  const at = i * INDEX_RECORD_BYTES;
  const r = segment.records;
  const pack = segment.packs[readU32(r, at + 32)];
  if (!pack) throw new PackFormatError('index record names a pack outside its table');
  return {
    id: toHex(r.subarray(at, at + BLOB_ID_BYTES)),
    packId: pack.id,
    offset: readU32(r, at + 36),
    length: readU32(r, at + 40),
    rawLength: readU32(r, at + 44),
    compressed: ((r[at + 48] as number) & FLAG_COMPRESSED) !== 0,
  };
}

function writeRecord(options: {
  target: Uint8Array;
  at: number;
  id: Uint8Array;
  packNo: number;
  entry: PackEntry;
}): void {
  const { target, at, id, packNo, entry } = options;
  target.set(id, at);
  writeU32(target, at + 32, packNo);
  writeU32(target, at + 36, entry.offset);
  writeU32(target, at + 40, entry.length);
  writeU32(target, at + 44, entry.rawLength);
  target[at + 48] = entry.compressed ? FLAG_COMPRESSED : 0;
}

function idBytes(id: string): Uint8Array {
  const bytes = fromHex(id);
  if (!bytes || bytes.length !== BLOB_ID_BYTES) throw new PackFormatError(`not a blob id: ${id}`);
  return bytes;
}

/** The record number of a blob id (its bytes) in a segment, or -1: a binary search. */
export function findIn(segment: IndexSegment, id: Uint8Array): number {
  let lo = 0;
  let hi = segment.count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareBytes({
      a: segment.records,
      aOffset: mid * INDEX_RECORD_BYTES,
      b: id,
      bOffset: 0,
      length: BLOB_ID_BYTES,
    });
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** A segment of the blobs of some packs (a writer's packs, or packs read back by recovery). */
export function segmentOfPacks(
  packs: readonly { pack: PackInfo; entries: readonly PackEntry[] }[],
): IndexSegment {
  const rows: { id: Uint8Array; packNo: number; entry: PackEntry }[] = [];
  packs.forEach((p, packNo) => {
    for (const entry of p.entries) rows.push({ id: idBytes(entry.id), packNo, entry });
  });
  rows.sort((a, b) => compareBytes({ a: a.id, aOffset: 0, b: b.id, bOffset: 0, length: BLOB_ID_BYTES }));
  const records = new Uint8Array(rows.length * INDEX_RECORD_BYTES);
  let count = 0;
  for (const row of rows) {
    const previous = count - 1;
    if (
      previous >= 0 &&
      compareBytes({
        a: records,
        aOffset: previous * INDEX_RECORD_BYTES,
        b: row.id,
        bOffset: 0,
        length: BLOB_ID_BYTES,
      }) === 0
    )
      continue; // the same blob stored twice (two writers at once): one location is enough
    writeRecord({ target: records, at: count * INDEX_RECORD_BYTES, ...row });
    count++;
  }
  return { packs: packs.map((p) => p.pack), records: records.subarray(0, count * INDEX_RECORD_BYTES), count };
}

/** A segment as an index object's plaintext (the format above). */
export function encodeIndex(segment: IndexSegment): Uint8Array {
  const packBytes = 4 + segment.packs.length * PACK_ROW_BYTES;
  const out = new Uint8Array(MAGIC_BYTES.length + packBytes + 4 + segment.count * INDEX_RECORD_BYTES);
  out.set(MAGIC_BYTES, 0);
  let at = MAGIC_BYTES.length;
  writeU32(out, at, segment.packs.length);
  at += 4;
  for (const pack of segment.packs) {
    const id = fromHex(pack.id);
    if (!id || id.length !== PACK_ID_BYTES) throw new PackFormatError(`not a pack id: ${pack.id}`);
    out.set(id, at);
    writeU32(out, at + PACK_ID_BYTES, pack.bytes);
    at += PACK_ROW_BYTES;
  }
  writeU32(out, at, segment.count);
  at += 4;
  out.set(segment.records.subarray(0, segment.count * INDEX_RECORD_BYTES), at);
  return out;
}

/** An index object's plaintext back to a segment; checks order, uniqueness and pack numbers. */
export function decodeIndex(bytes: Uint8Array): IndexSegment {
  if (
    bytes.length < MAGIC_BYTES.length + 8 ||
    compareBytes({ a: bytes, aOffset: 0, b: MAGIC_BYTES, bOffset: 0, length: MAGIC_BYTES.length }) !== 0
  )
    throw new PackFormatError('not a Lifeboat index (magic missing)');
  let at = MAGIC_BYTES.length;
  const packCount = readU32(bytes, at);
  at += 4;
  if (at + packCount * PACK_ROW_BYTES + 4 > bytes.length)
    throw new PackFormatError('index pack table truncated');
  const packs: PackInfo[] = [];
  for (let i = 0; i < packCount; i++) {
    packs.push({
      id: toHex(bytes.subarray(at, at + PACK_ID_BYTES)),
      bytes: readU32(bytes, at + PACK_ID_BYTES),
    });
    at += PACK_ROW_BYTES;
  }
  const count = readU32(bytes, at);
  at += 4;
  if (bytes.length !== at + count * INDEX_RECORD_BYTES) throw new PackFormatError('index records truncated');
  const records = bytes.slice(at);
  for (let i = 0; i < count; i++) {
    const rat = i * INDEX_RECORD_BYTES;
    if (readU32(records, rat + 32) >= packCount)
      throw new PackFormatError('index record names a pack outside its table');
    if (
      i > 0 &&
      compareBytes({
        a: records,
        aOffset: rat - INDEX_RECORD_BYTES,
        b: records,
        bOffset: rat,
        length: BLOB_ID_BYTES,
      }) >= 0
    )
      throw new PackFormatError('index records out of order');
  }
  return { packs, records, count };
}

/** The record number of a blob id in a segment, or -1. */
export function positionIn(segment: IndexSegment, id: string): number {
  const bytes = fromHex(id);
  if (!bytes || bytes.length !== BLOB_ID_BYTES) return -1;
  return findIn(segment, bytes);
}

/** Compares the blob ids of record `i` of `a` and record `j` of `b` (negative: a's sorts first). */
export function compareIdsAt(a: IndexSegment, i: number, b: IndexSegment, j: number): number {
  return compareBytes({
    a: a.records,
    aOffset: i * INDEX_RECORD_BYTES,
    b: b.records,
    bOffset: j * INDEX_RECORD_BYTES,
    length: BLOB_ID_BYTES,
  });
}

/** The pack number (in the segment's pack table) of a record. */
export function packNumberAt(segment: IndexSegment, record: number): number {
  return readU32(segment.records, record * INDEX_RECORD_BYTES + 32);
}

/** The stored length of record `record` of a segment (its sealed blob record's bytes). */
export function recordLengthAt(segment: IndexSegment, record: number): number {
  return readU32(segment.records, record * INDEX_RECORD_BYTES + 40);
}

/** The location of record `record` of a segment (its blob id, pack and place). */
export function locationAt(segment: IndexSegment, record: number): BlobLocation {
  return recordAt(segment, record);
}

/** The location of a blob in a segment, if the segment holds it. */
export function lookupInSegment(segment: IndexSegment, id: string): BlobLocation | undefined {
  const bytes = fromHex(id);
  if (!bytes || bytes.length !== BLOB_ID_BYTES) return undefined;
  const i = findIn(segment, bytes);
  return i < 0 ? undefined : recordAt(segment, i);
}

/** Every location a segment holds, in blob id order. */
export function* locationsOf(segment: IndexSegment): Generator<BlobLocation> {
  for (let i = 0; i < segment.count; i++) yield recordAt(segment, i);
}
