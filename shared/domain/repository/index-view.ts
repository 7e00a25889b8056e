/**
 * The repository's index as loaded: an IndexView holds the index objects read (their segments,
 * index-segment.ts) and merges them as they arrive (index-merge.ts), so lookups stay logarithmic
 * however many index objects were loaded. Pure.
 *
 * Never: a blob's location forgotten before its pack is deleted (a merge sets the locations it
 * does not keep aside, in further levels).
 */
import { fromHex } from './bytes.js';
import { mergeLevels } from './index-merge.js';
import { type BlobLocation, findIn, type IndexSegment, locationAt } from './index-segment.js';
import { BLOB_ID_BYTES } from './pack.js';

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
      if (i >= 0) return locationAt(seg, i);
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
      const location = locationAt(seg, i);
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
