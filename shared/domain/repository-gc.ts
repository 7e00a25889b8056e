/**
 * Garbage collection's decisions, apart from its I/O (docs/repository-format.md, "Garbage
 * collection"): which packs hold no live blob, and which condemned packs may go now (block maps
 * are read with block mode's own parser, domain/block-map). Deletion is two-phase: a pack is first condemned (writers stop deduplicating
 * against it), and deleted only once every writer that could have loaded it before the
 * condemnation has ended — and only if no manifest written meanwhile uses one of its blobs.
 */

export interface PackContents {
  readonly id: string;
  readonly bytes: number;
  readonly blobs: readonly string[];
}

export interface Condemnation {
  readonly recordId: string;
  readonly packs: readonly { readonly id: string; readonly bytes: number }[];
  /** Writers live once the record existed; undefined until the collector has listed them. */
  readonly blockers?: readonly string[];
}

/** Packs none of whose blobs is live, less those already condemned. */
export function packsToCondemn(options: {
  packs: Iterable<PackContents>;
  isLive: (blobId: string) => boolean;
  alreadyCondemned: ReadonlySet<string>;
}): PackContents[] {
  const out: PackContents[] = [];
  for (const pack of options.packs) {
    if (options.alreadyCondemned.has(pack.id)) continue;
    if (!pack.blobs.some(options.isLive)) out.push(pack);
  }
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
