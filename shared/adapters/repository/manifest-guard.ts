/**
 * What writeManifest checks before a manifest may name blobs (docs/repository-format.md, "Snapshot
 * manifests" and "Garbage collection"): every blob it reaches is indexed, and none lies in a pack
 * garbage collection condemned unless one of this process's open writers blocks that pack's
 * deletion (it held its lease before the condemnation), and one is in a pack not known to be gone
 * (deleted while an index still names it). That covers blobs a run did not put
 * itself — a block map from a resumed run's checkpoint — which no lease protected.
 * Block manifests are checked through their block maps; file manifests through their root only
 * (file mode puts every blob of a run through its writer).
 */
import type { CondemnedRecord } from '../../contracts/repository.js';
import { BlobMissing, RepositoryBusy } from '../../domain/errors.js';
import { parseBlockMapChunk } from '../../domain/repository/block-map.js';
import type { BlobId, SnapshotManifest } from '../../ports/repository.js';
import { mapBounded } from './bounded.js';
import { type RepositorySession, readCondemnedRecords } from './repository-session.js';

const READ_CONCURRENCY = 8;

export async function checkManifestBlobs(options: {
  session: RepositorySession;
  manifest: SnapshotManifest;
  /** Writers of this process holding their lease now. */
  writerIds: ReadonlySet<string>;
  getBlob: (id: BlobId, signal?: AbortSignal) => Promise<Uint8Array>;
  signal?: AbortSignal;
}): Promise<void> {
  const { session, manifest, writerIds, signal } = options;
  const byPack = new Map<string, CondemnedRecord[]>();
  for (const { record } of await readCondemnedRecords({ store: session.store, signal }))
    for (const pack of record.packs) byPack.set(pack.id, [...(byPack.get(pack.id) ?? []), record]);
  let refreshed = false;
  // A blob may be indexed in several packs (stored again after a condemnation): one it may use
  // is enough, a pack no record condemns or one this writer blocks the deletion of.
  const check = async (id: BlobId): Promise<void> => {
    let locations = session.index.locations(id);
    if (locations.length === 0 && !refreshed) {
      refreshed = true;
      await session.index.refresh(signal);
      locations = session.index.locations(id);
    }
    if (locations.length === 0)
      throw new BlobMissing(id, { reason: 'a manifest may only name flushed blobs' });
    // Locations in packs known to be deleted (an index object that landed after its packs were
    // collected) hold nothing.
    const gone = session.gonePacks();
    locations = locations.filter((l) => !gone.has(l.packId));
    if (locations.length === 0)
      throw new BlobMissing(id, { reason: 'every pack the index names it in is gone; put the blob again' });
    let condemning = false;
    for (const location of locations) {
      const records = byPack.get(location.packId) ?? [];
      if (records.every((r) => r.blockers?.some((w) => writerIds.has(w)))) return;
      if (records.some((r) => r.blockers === undefined)) condemning = true;
    }
    if (condemning)
      throw new RepositoryBusy(
        `garbage collection is condemning the pack of blob ${id}; write the manifest again`,
      );
    throw new BlobMissing(id, {
      reason: 'garbage collection condemned its pack before this writer started; put the blob again',
    });
  };
  if (manifest.kind === 'file') return check(manifest.root);
  for (const chunk of manifest.blockMap) await check(chunk);
  await mapBounded(manifest.blockMap, READ_CONCURRENCY, async (chunk) => {
    const entries = parseBlockMapChunk(Buffer.from(await options.getBlob(chunk, signal)).toString('utf8'));
    for (const [, id] of entries) await check(id);
  });
}
