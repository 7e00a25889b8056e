/**
 * Merging index segments (index-segment.ts) into levels: a k-way merge over their sorted records
 * that keeps one location of every blob in level 0 and a blob's locations in other packs in the
 * levels above, each level a segment of its own. Pure.
 *
 * Never: a blob's location in a pack that is kept dropped by a merge (a blob in several packs
 * keeps a location in each, its others set aside or in further levels), a location in an
 * excluded pack kept.
 */
import { compareBytes, readU32, writeU32 } from './bytes.js';
import { INDEX_RECORD_BYTES, type IndexSegment, type PackInfo } from './index-segment.js';
import { BLOB_ID_BYTES, PackFormatError } from './pack.js';

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
 * One pack table for all the segments, in order of first appearance, less the excluded packs;
 * and for each segment, its pack numbers in that table (-1: excluded).
 */
function unitePackTables(
  segments: readonly IndexSegment[],
  exclude: ReadonlySet<string>,
): { packs: PackInfo[]; remap: number[][] } {
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
  return { packs, remap };
}

/** The state of one mergeLevels run: a cursor a segment, the current id's locations, the levels. */
class LevelMerge {
  private readonly segments: readonly IndexSegment[];
  private readonly remap: readonly (readonly number[])[];
  private readonly packs: readonly PackInfo[];
  private readonly demoted: readonly boolean[];
  private readonly firstReplaces: boolean;
  private readonly maxLevels: number;
  private readonly cursor: number[];
  // The kept locations of the current id, in segment order: segment, byte offset, pack number.
  private readonly foundSeg: Int32Array;
  private readonly foundAt: Int32Array;
  private readonly foundPack: Int32Array;
  private readonly levels: RecordRows[];
  /** For levels above 0: pack number in `packs` → pack number in the level's own table. */
  private readonly levelPackNo: Map<number, number>[] = [new Map()];
  private readonly levelPacks: PackInfo[][];

  constructor(options: {
    segments: readonly IndexSegment[];
    remap: readonly (readonly number[])[];
    packs: PackInfo[];
    demoted: readonly boolean[];
    firstReplaces: boolean;
    maxLevels: number;
  }) {
    const { segments } = options;
    this.segments = segments;
    this.remap = options.remap;
    this.packs = options.packs;
    this.demoted = options.demoted;
    this.firstReplaces = options.firstReplaces;
    this.maxLevels = options.maxLevels;
    const total = segments.reduce((sum, s) => sum + s.count, 0);
    this.levels = [new RecordRows(total)];
    this.levelPacks = [options.packs];
    this.cursor = segments.map(() => 0);
    this.foundSeg = new Int32Array(segments.length);
    this.foundAt = new Int32Array(segments.length);
    this.foundPack = new Int32Array(segments.length);
  }

  /** Merges every record of every segment into the levels and returns them. */
  run(): IndexSegment[] {
    for (let best = this.smallest(); best >= 0; best = this.smallest()) this.placeFound(this.gather(best));
    return this.levels.map((rows, i) => rows.segment(this.levelPacks[i] as PackInfo[]));
  }

  /** The segment whose cursor holds the smallest id (the first such), or -1 once all are done. */
  private smallest(): number {
    const { segments, cursor } = this;
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
    return best;
  }

  /**
   * Advances every cursor sitting on the id under `best`'s, gathering the locations whose pack is
   * kept (once a pack); foundSeg lists them in segment order, the arrays are indexed by segment.
   * Returns how many were found.
   */
  private gather(best: number): number {
    const { segments, cursor, foundSeg, foundAt, foundPack } = this;
    const bestSeg = segments[best] as IndexSegment;
    const idAt = (cursor[best] as number) * INDEX_RECORD_BYTES;
    const id = bestSeg.records.subarray(idAt, idAt + BLOB_ID_BYTES);
    let found = 0;
    for (let s = 0; s < segments.length; s++) {
      const other = segments[s] as IndexSegment;
      const i = cursor[s] as number;
      if (i >= other.count) continue;
      const oat = i * INDEX_RECORD_BYTES;
      if (compareBytes({ a: other.records, aOffset: oat, b: id, bOffset: 0, length: BLOB_ID_BYTES }) !== 0)
        continue;
      cursor[s] = i + 1;
      const n = (this.remap[s] as number[])[readU32(other.records, oat + 32)];
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
    return found;
  }

  /** Places the current id's locations: one level each, demoted packs' after the others. */
  private placeFound(found: number): void {
    const { foundSeg, foundPack } = this;
    if (found === 0) return;
    if (found === 1 || (this.firstReplaces && foundSeg[0] === 0)) {
      this.place(foundSeg[0] as number, 0);
      return;
    }
    let level = 0;
    for (let pass = 0; pass < 2; pass++)
      for (let f = 0; f < found && level < this.maxLevels; f++) {
        const s = foundSeg[f] as number;
        if ((this.demoted[foundPack[s] as number] ? 1 : 0) !== pass) continue;
        this.place(s, level);
        level++;
      }
  }

  /** Appends segment `s`'s found location to `level`, adding its pack to the level's table. */
  private place(s: number, level: number): void {
    const { levels, levelPacks } = this;
    const records = (this.segments[s] as IndexSegment).records;
    const pack = this.foundPack[s] as number;
    if (level === 0) {
      (levels[0] as RecordRows).push(records, this.foundAt[s] as number, pack);
      return;
    }
    if (levels.length <= level) {
      levels.push(new RecordRows(16));
      this.levelPackNo.push(new Map());
      levelPacks.push([]);
    }
    const table = this.levelPackNo[level] as Map<number, number>;
    let n = table.get(pack);
    if (n === undefined) {
      n = (levelPacks[level] as PackInfo[]).length;
      (levelPacks[level] as PackInfo[]).push(this.packs[pack] as PackInfo);
      table.set(pack, n);
    }
    (levels[level] as RecordRows).push(records, this.foundAt[s] as number, n);
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
  const { packs, remap } = unitePackTables(segments, exclude);
  return new LevelMerge({
    segments,
    remap,
    packs,
    demoted: packs.map((p) => demote.has(p.id)),
    firstReplaces: options.firstReplaces === true,
    maxLevels: Math.max(1, options.maxLevels ?? Number.POSITIVE_INFINITY),
  }).run();
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
