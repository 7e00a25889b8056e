/**
 * Garbage collection's decisions, apart from its I/O (docs/repository-format.md, "Garbage
 * collection"): the live marks, which partly dead packs to repack, which packs hold no live blob,
 * and which condemned packs may go now. Deletion is two-phase: a pack is first condemned (writers
 * stop deduplicating against it), and deleted only once every writer that could have loaded it
 * before the condemnation has ended — and only if no manifest written meanwhile uses one of its
 * blobs. A repacked pack is dead once its live blobs have copies the index names instead.
 */
import {
  type BlobLocation,
  compareIdsAt,
  type IndexSegment,
  locationAt,
  type PackInfo,
  packNumberAt,
  positionIn,
  recordLengthAt,
} from './index-segment.js';
import { PACK_PREFIX_BYTES, packHeaderPlainBytes } from './pack.js';

/**
 * A pack whose dead bytes are at least this fraction of its size has its live blobs copied into
 * new packs, after which it holds nothing live and goes the way of dead packs. At one half, the
 * bytes copied never exceed the bytes freed.
 */
export const DEFAULT_REPACK_DEAD_FRACTION = 0.5;

/**
 * The live mark of every blob of an inventory (one merged index segment): one bit a blob, beside
 * the segment's 49 bytes, instead of a set of ids — so marking a repository of millions of blobs
 * stays within the index's own memory. A blob the inventory does not hold cannot be marked (its
 * pack is not in the inventory, so it is not a candidate either).
 */
export class BlobMarks {
  private readonly bits: Uint8Array;
  private marked = 0;

  constructor(readonly inventory: IndexSegment) {
    this.bits = new Uint8Array(Math.ceil(inventory.count / 8));
  }

  /** Marks the blob live; false when the inventory does not hold it. */
  mark(id: string): boolean {
    const i = positionIn(this.inventory, id);
    if (i < 0) return false;
    const mask = 1 << (i & 7);
    if (((this.bits[i >> 3] as number) & mask) === 0) {
      this.bits[i >> 3] = (this.bits[i >> 3] as number) | mask;
      this.marked++;
    }
    return true;
  }

  isMarked(id: string): boolean {
    const i = positionIn(this.inventory, id);
    return i >= 0 && this.markedAt(i);
  }

  /** Whether the inventory's record number `record` is marked. */
  markedAt(record: number): boolean {
    return ((this.bits[record >> 3] as number) & (1 << (record & 7))) !== 0;
  }

  count(): number {
    return this.marked;
  }

  /**
   * Packs holding at least one marked blob. A blob marked in `relocated` too (repacking copied it
   * into a new pack, which the index now names instead) no longer keeps its old pack live.
   */
  livePacks(relocated?: BlobMarks): Set<string> {
    const live = new Set<string>();
    for (let i = 0; i < this.inventory.count; i++)
      if (this.markedAt(i) && !relocated?.markedAt(i)) {
        const pack = this.inventory.packs[packNumberAt(this.inventory, i)];
        if (pack) live.add(pack.id);
      }
    return live;
  }
}

/**
 * The blobs marked live that `next` (the index about to replace the current one) has no location
 * for: one pass over both, which are sorted by id. Garbage collection keeps a pack rather than let
 * one of these lose its last indexed location.
 */
export function liveBlobsMissing(options: { marks: BlobMarks; next: IndexSegment }): string[] {
  const { marks, next } = options;
  const inventory = marks.inventory;
  const missing: string[] = [];
  let j = 0;
  for (let i = 0; i < inventory.count; i++) {
    if (!marks.markedAt(i)) continue;
    while (j < next.count && compareIdsAt(next, j, inventory, i) < 0) j++;
    if (j >= next.count || compareIdsAt(next, j, inventory, i) !== 0)
      missing.push(locationAt(inventory, i).id);
  }
  return missing;
}

/** A partly dead pack to rewrite: its live blobs, to be copied into new packs. */
export interface RepackPlan {
  readonly pack: PackInfo;
  /** The live blobs the inventory places in this pack, in offset order. */
  readonly live: readonly BlobLocation[];
  readonly liveBytes: number;
  /** What the pack is larger than one holding only its live blobs: dead records and their header entries. */
  readonly deadBytes: number;
}

/**
 * Packs with some live blobs whose dead bytes are at least `minDeadFraction` of their size.
 * Dead bytes are counted against a pack of the live blobs alone (header included), so a pack
 * whose blobs are all live has none and is never rewritten: a repacked copy is never repacked
 * again until blobs in it die. Small packs qualify on the same terms as full ones.
 */
export function packsToRepack(options: {
  marks: BlobMarks;
  /** Packs that may be rewritten (present, indexed, not condemned). */
  eligible: (packId: string) => boolean;
  /** In (0, 1]; at 1 no pack with a live blob qualifies. */
  minDeadFraction: number;
  /** Bytes sealing adds to the pack header. */
  sealOverhead: number;
}): RepackPlan[] {
  const { marks } = options;
  const inventory = marks.inventory;
  const liveBytes = new Float64Array(inventory.packs.length);
  const liveCount = new Uint32Array(inventory.packs.length);
  for (let i = 0; i < inventory.count; i++)
    if (marks.markedAt(i)) {
      const p = packNumberAt(inventory, i);
      liveBytes[p] = (liveBytes[p] as number) + recordLengthAt(inventory, i);
      liveCount[p] = (liveCount[p] as number) + 1;
    }
  const chosen = new Map<number, { pack: PackInfo; liveBytes: number; deadBytes: number }>();
  inventory.packs.forEach((pack, p) => {
    const count = liveCount[p] as number;
    if (count === 0 || !options.eligible(pack.id)) return;
    const live = liveBytes[p] as number;
    const compact = PACK_PREFIX_BYTES + packHeaderPlainBytes(count) + options.sealOverhead + live;
    const deadBytes = Math.max(0, pack.bytes - compact);
    if (deadBytes > 0 && deadBytes >= options.minDeadFraction * pack.bytes)
      chosen.set(p, { pack, liveBytes: live, deadBytes });
  });
  const live = new Map<number, BlobLocation[]>();
  for (let i = 0; i < inventory.count; i++) {
    if (!marks.markedAt(i)) continue;
    const p = packNumberAt(inventory, i);
    if (!chosen.has(p)) continue;
    const list = live.get(p) ?? [];
    list.push(locationAt(inventory, i));
    live.set(p, list);
  }
  return [...chosen].map(([p, plan]) => ({
    ...plan,
    live: (live.get(p) ?? []).sort((a, b) => a.offset - b.offset),
  }));
}

export interface Condemnation {
  readonly recordId: string;
  readonly packs: readonly { readonly id: string; readonly bytes: number }[];
  /** Writers live once the record existed; undefined until the collector has listed them. */
  readonly blockers?: readonly string[];
}

/** Packs none of whose blobs is live, less those already condemned. */
export function packsToCondemn(options: {
  packs: Iterable<PackInfo>;
  livePacks: ReadonlySet<string>;
  alreadyCondemned: ReadonlySet<string>;
}): PackInfo[] {
  const out: PackInfo[] = [];
  for (const pack of options.packs)
    if (!options.alreadyCondemned.has(pack.id) && !options.livePacks.has(pack.id)) out.push(pack);
  return out;
}

export interface SweepPlan {
  /** Packs to delete now. */
  readonly deletions: readonly { readonly id: string; readonly bytes: number }[];
  /** Packs a manifest written since their condemnation uses: no longer condemned. */
  readonly reprieved: readonly string[];
  /** Each record's packs left condemned afterwards (empty: delete the record). */
  readonly remaining: ReadonlyMap<string, readonly { readonly id: string; readonly bytes: number }[]>;
}

/**
 * For each record whose blockers have all ended: its packs still without a live blob are deleted,
 * the others reprieved. Records with a live blocker, or no blockers listed yet, wait.
 * `packHasLiveBlob` must come from manifests read after the live leases were.
 */
export function planSweep(options: {
  records: readonly Condemnation[];
  liveWriters: ReadonlySet<string>;
  packHasLiveBlob: (packId: string) => boolean;
}): SweepPlan {
  const deletions: { id: string; bytes: number }[] = [];
  const reprieved: string[] = [];
  const remaining = new Map<string, { id: string; bytes: number }[]>();
  const deleted = new Set<string>();
  for (const record of options.records) {
    const waiting = record.blockers === undefined || record.blockers.some((w) => options.liveWriters.has(w));
    if (waiting) {
      remaining.set(record.recordId, [...record.packs]);
      continue;
    }
    for (const pack of record.packs) {
      if (options.packHasLiveBlob(pack.id)) reprieved.push(pack.id);
      else if (!deleted.has(pack.id)) {
        deleted.add(pack.id);
        deletions.push(pack);
      }
    }
    remaining.set(record.recordId, []);
  }
  return { deletions, reprieved, remaining };
}

/** A lease is live until `skewMs` after its own expiry (its writer's clock may run behind). */
export function leaseIsLive(options: { expiresAt: string; now: Date; skewMs: number }): boolean {
  const expires = Date.parse(options.expiresAt);
  return Number.isNaN(expires) || options.now.getTime() <= expires + options.skewMs;
}
