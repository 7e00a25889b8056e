/**
 * The repository's index: which pack holds each blob, at which offset. Index objects are sorted
 * tables of fixed-size records (binary search, about 50 bytes a blob in memory) with a table of
 * the packs they cover; an IndexView holds several and merges them as they arrive, so lookups stay
 * logarithmic however many index objects were loaded. Pure: encoding, lookup, merging.
 *
 *   "LBIDX001" | u32 pack count | (pack id 16 | u32 pack bytes)* | u32 record count | record*
 *   record = blob id 32 | u32 pack number | u32 offset | u32 length | u32 plaintext length | u8 flags
 *
 * Never: a record whose pack is not in its table, records out of order, two records of one id
 * in one table; a blob's location in a pack that is kept dropped by a merge (a blob in several
 * packs keeps a location in each, its others set aside or in further levels).
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

function findIn(segment: IndexSegment, id: Uint8Array): number {
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

/** Records appended one by one into a buffer that grows. */
class RecordRows {
  private bytes: Uint8Array;
  count = 0;
  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(1, capacity) * INDEX_RECORD_BYTES);
  }
  push(from: Uint8Array, at: number, packNo: number): void {
    const target = this.count * INDEX_RECORD_BYTES;
    if (target + INDEX_RECORD_BYTES > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes.set(from.subarray(at, at + INDEX_RECORD_BYTES), target);
    writeU32(this.bytes, target + 32, packNo);
    this.count++;
  }
  segment(packs: readonly PackInfo[]): IndexSegment {
    return { packs, records: this.bytes.slice(0, this.count * INDEX_RECORD_BYTES), count: this.count };
  }
}

/**
 * Merges segments into levels, keeping every location of a blob in a pack that is kept: level 0
 * holds one location of every blob (the first segment's wins, unless its pack is demoted), level 1
 * a second location in another pack where there is one, and so on. Each level is a segment (sorted,
 * each id once), so each can be an index object of its own. Dropped: locations in excluded packs,
 * a second location in the same pack, and with `firstReplaces` every other location of a blob the
 * first segment holds (repacking's copies replace their old locations). Level 0's pack table lists
 * every pack kept, the others only the packs they use.
 */
export function mergeLevels(options: {
  segments: readonly IndexSegment[];
  excludePacks?: ReadonlySet<string>;
  /** Locations in these packs come after every other location of the same blob. */
  demotePacks?: ReadonlySet<string>;
  firstReplaces?: boolean;
  /** Levels built at most (1: one location a blob, as mergeSegments). */
  maxLevels?: number;
}): IndexSegment[] {
  const { segments } = options;
  const exclude = options.excludePacks ?? new Set<string>();
  const demote = options.demotePacks ?? new Set<string>();
  const maxLevels = Math.max(1, options.maxLevels ?? Number.POSITIVE_INFINITY);
  const packs: PackInfo[] = [];
  const packNo = new Map<string, number>();
  const remap = segments.map((s) =>
    s.packs.map((p) => {
      if (exclude.has(p.id)) return -1;
      let n = packNo.get(p.id);
      if (n === undefined) {
        n = packs.length;
        packs.push(p);
        packNo.set(p.id, n);
      }
      return n;
    }),
  );
  const demoted = packs.map((p) => demote.has(p.id));
  const total = segments.reduce((sum, s) => sum + s.count, 0);
  const levels = [new RecordRows(total)];
  /** For levels above 0: pack number in `packs` → pack number in the level's own table. */
  const levelPackNo: Map<number, number>[] = [new Map()];
  const levelPacks: PackInfo[][] = [packs];
  const cursor = segments.map(() => 0);
  // The kept locations of the current id, in segment order: segment, byte offset, pack number.
  const foundSeg = new Int32Array(segments.length);
  const foundAt = new Int32Array(segments.length);
  const foundPack = new Int32Array(segments.length);
  const place = (s: number, level: number): void => {
    const records = (segments[s] as IndexSegment).records;
    const pack = foundPack[s] as number;
    if (level === 0) {
      (levels[0] as RecordRows).push(records, foundAt[s] as number, pack);
      return;
    }
    if (levels.length <= level) {
      levels.push(new RecordRows(16));
      levelPackNo.push(new Map());
      levelPacks.push([]);
    }
    const table = levelPackNo[level] as Map<number, number>;
    let n = table.get(pack);
    if (n === undefined) {
      n = (levelPacks[level] as PackInfo[]).length;
      (levelPacks[level] as PackInfo[]).push(packs[pack] as PackInfo);
      table.set(pack, n);
    }
    (levels[level] as RecordRows).push(records, foundAt[s] as number, n);
  };
  for (;;) {
    // The smallest id among the segments' cursors.
    let best = -1;
    for (let s = 0; s < segments.length; s++) {
      const seg = segments[s] as IndexSegment;
      const i = cursor[s] as number;
      if (i >= seg.count) continue;
      if (best < 0) {
        best = s;
        continue;
      }
      const bestSeg = segments[best] as IndexSegment;
      const c = compareBytes({
        a: seg.records,
        aOffset: i * INDEX_RECORD_BYTES,
        b: bestSeg.records,
        bOffset: (cursor[best] as number) * INDEX_RECORD_BYTES,
        length: BLOB_ID_BYTES,
      });
      if (c < 0) best = s;
    }
    if (best < 0) break;
    const bestSeg = segments[best] as IndexSegment;
    const idAt = (cursor[best] as number) * INDEX_RECORD_BYTES;
    const id = bestSeg.records.subarray(idAt, idAt + BLOB_ID_BYTES);
    // Advance every cursor sitting on this id, gathering the locations whose pack is kept (once a
    // pack); foundSeg lists them in segment order, the arrays are indexed by segment.
    let found = 0;
    for (let s = 0; s < segments.length; s++) {
      const other = segments[s] as IndexSegment;
      const i = cursor[s] as number;
      if (i >= other.count) continue;
      const oat = i * INDEX_RECORD_BYTES;
      if (compareBytes({ a: other.records, aOffset: oat, b: id, bOffset: 0, length: BLOB_ID_BYTES }) !== 0)
        continue;
      cursor[s] = i + 1;
      const n = (remap[s] as number[])[readU32(other.records, oat + 32)];
      if (n === undefined) throw new PackFormatError('index record names a pack outside its table');
      if (n < 0) continue;
      let seen = false;
      for (let f = 0; f < found && !seen; f++) seen = foundPack[foundSeg[f] as number] === n;
      if (seen) continue;
      foundSeg[found] = s;
      foundAt[s] = oat;
      foundPack[s] = n;
      found++;
    }
    if (found === 0) continue;
    if (found === 1 || (options.firstReplaces && foundSeg[0] === 0)) {
      place(foundSeg[0] as number, 0);
      continue;
    }
    let level = 0;
    for (let pass = 0; pass < 2; pass++)
      for (let f = 0; f < found && level < maxLevels; f++) {
        const s = foundSeg[f] as number;
        if ((demoted[foundPack[s] as number] ? 1 : 0) !== pass) continue;
        place(s, level);
        level++;
      }
  }
  return levels.map((rows, i) => rows.segment(levelPacks[i] as PackInfo[]));
}

/**
 * Merges segments into one: the union of their records (the first segment's location wins for an
 * id in several), less every record of an excluded pack; the pack table lists the packs kept.
 */
export function mergeSegments(options: {
  segments: readonly IndexSegment[];
  excludePacks?: ReadonlySet<string>;
  demotePacks?: ReadonlySet<string>;
}): IndexSegment {
  return mergeLevels({ ...options, maxLevels: 1 })[0] as IndexSegment;
}

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

export function lookupInSegment(segment: IndexSegment, id: string): BlobLocation | undefined {
  const bytes = fromHex(id);
  if (!bytes || bytes.length !== BLOB_ID_BYTES) return undefined;
  const i = findIn(segment, bytes);
  return i < 0 ? undefined : recordAt(segment, i);
}

export function* locationsOf(segment: IndexSegment): Generator<BlobLocation> {
  for (let i = 0; i < segment.count; i++) yield recordAt(segment, i);
}

/** Segments of locations that lost a merge kept before they are merged together. */
const MIN_OTHERS_BEFORE_MERGE = 8;

/**
 * Every loaded segment, merged as they arrive like a binary counter (a segment is merged into
 * the one before while it is at least half that one's size), so at most log2(n) segments are
 * searched per lookup. Newer segments are searched first. A blob that several loaded segments
 * place in different packs keeps every location: a merge keeps one in the merged segment and the
 * others aside (`locationsOf`, `levels`), so no location is forgotten before its pack is deleted.
 */
export class IndexView {
  private segments: IndexSegment[] = [];
  /** Locations merges set aside: a blob's location in another pack than the one searched first. */
  private others: IndexSegment[] = [];
  private othersLimit = MIN_OTHERS_BEFORE_MERGE;
  private readonly packTable = new Map<string, number>();

  add(segment: IndexSegment): void {
    for (const p of segment.packs) this.packTable.set(p.id, p.bytes);
    if (segment.count === 0) return;
    this.segments.push(segment);
    while (this.segments.length >= 2) {
      const last = this.segments[this.segments.length - 1] as IndexSegment;
      const before = this.segments[this.segments.length - 2] as IndexSegment;
      if (last.count * 2 < before.count) break;
      const [merged, ...aside] = mergeLevels({ segments: [last, before] });
      this.segments.splice(-2, 2, merged as IndexSegment);
      this.keepAside(aside);
    }
  }

  private keepAside(levels: readonly IndexSegment[]): void {
    for (const level of levels) if (level.count > 0) this.others.push(level);
    if (this.others.length <= this.othersLimit) return;
    this.others = mergeLevels({ segments: this.others }).filter((l) => l.count > 0);
    this.othersLimit = Math.max(MIN_OTHERS_BEFORE_MERGE, 2 * this.others.length);
  }

  lookup(id: string): BlobLocation | undefined {
    const bytes = fromHex(id);
    if (!bytes || bytes.length !== BLOB_ID_BYTES) return undefined;
    for (let s = this.segments.length - 1; s >= 0; s--) {
      const seg = this.segments[s] as IndexSegment;
      const i = findIn(seg, bytes);
      if (i >= 0) return recordAt(seg, i);
    }
    return undefined;
  }

  /** Every location of a blob, one a pack: the one `lookup` gives first, then the others. */
  locationsOf(id: string): BlobLocation[] {
    const bytes = fromHex(id);
    if (!bytes || bytes.length !== BLOB_ID_BYTES) return [];
    const out: BlobLocation[] = [];
    const searched = [...this.segments.slice().reverse(), ...this.others];
    for (const seg of searched) {
      const i = findIn(seg, bytes);
      if (i < 0) continue;
      const location = recordAt(seg, i);
      if (!out.some((l) => l.packId === location.packId)) out.push(location);
    }
    return out;
  }

  /** Packs some loaded index covers, with their sizes. */
  packs(): ReadonlyMap<string, number> {
    return this.packTable;
  }

  /** Segments a lookup may search: at most log2(records) + 1. */
  segmentCount(): number {
    return this.segments.length;
  }

  blobCount(): number {
    return this.segments.reduce((n, s) => n + s.count, 0);
  }

  /**
   * Every location as levels (mergeLevels): level 0 one location a blob, the newest loaded unless
   * its pack is demoted; then the blob's locations in other packs. Excluded packs are dropped
   * before a location is chosen, so a blob is only lost if every one of its packs is excluded.
   * `prefer`'s locations come first and replace the others of their blobs.
   */
  levels(options?: {
    excludePacks?: ReadonlySet<string>;
    demotePacks?: ReadonlySet<string>;
    prefer?: IndexSegment;
    maxLevels?: number;
  }): IndexSegment[] {
    const packsOnly: IndexSegment = {
      packs: [...this.packTable].map(([id, bytes]) => ({ id, bytes })),
      records: new Uint8Array(0),
      count: 0,
    };
    const prefer = options?.prefer;
    return mergeLevels({
      segments: [...(prefer ? [prefer] : []), packsOnly, ...this.segments.slice().reverse(), ...this.others],
      ...(options?.excludePacks ? { excludePacks: options.excludePacks } : {}),
      ...(options?.demotePacks ? { demotePacks: options.demotePacks } : {}),
      ...(options?.maxLevels !== undefined ? { maxLevels: options.maxLevels } : {}),
      firstReplaces: prefer !== undefined,
    });
  }

  /** All segments as one location a blob (for GC and verify), less the excluded packs. */
  merged(excludePacks?: ReadonlySet<string>, demotePacks?: ReadonlySet<string>): IndexSegment {
    return this.levels({
      ...(excludePacks ? { excludePacks } : {}),
      ...(demotePacks ? { demotePacks } : {}),
      maxLevels: 1,
    })[0] as IndexSegment;
  }
}
