/**
 * verify: reads every pack once and checks every blob the index names in it (AEAD tag,
 * decompression, id recomputed from the plaintext), and each pack's own header. Problems are
 * reported, never thrown: one corrupt blob does not hide the others. Memory: one pack per read
 * in flight.
 */
import { BlobCorrupt } from '../../domain/errors.js';
import { type BlobLocation, locationsOf } from '../../domain/repository/index-view.js';
import { decodePackHeader, decodePackPrefix, PACK_PREFIX_BYTES } from '../../domain/repository/pack.js';
import { repositoryKeyId, repositoryKeys } from '../../domain/storage/keys.js';
import type { VerifyReport } from '../../ports/repository.js';
import { mapBounded } from './bounded.js';
import { openRecord } from './pack-io.js';
import { objectAad } from './repository-crypto.js';
import type { RepositorySession } from './repository-session.js';

export interface VerifyReportDetails extends VerifyReport {
  readonly packsChecked: number;
  /** The ids of blobs that are missing or fail their check (the problems name them too). */
  readonly badBlobs: readonly string[];
}

const READ_CONCURRENCY = 2;

export async function verifyRepository(options: {
  session: RepositorySession;
  signal?: AbortSignal;
}): Promise<VerifyReportDetails> {
  const { session, signal } = options;
  await session.refresh(signal);
  const byPack = new Map<string, BlobLocation[]>();
  // Every location, a blob's copies in other packs included.
  for (const level of session.index.levels())
    for (const location of locationsOf(level)) {
      const list = byPack.get(location.packId) ?? [];
      list.push(location);
      byPack.set(location.packId, list);
    }
  const listed = new Set(
    (await session.store.list(repositoryKeys.packsDir, { signal })).map(repositoryKeyId),
  );
  const problems: string[] = [];
  const badBlobs: string[] = [];
  let blobsChecked = 0;
  let bytesChecked = 0;
  let packsChecked = 0;
  await mapBounded([...byPack], READ_CONCURRENCY, async ([packId, locations]) => {
    signal?.throwIfAborted();
    const bytes = listed.has(packId)
      ? await session.store.get(repositoryKeys.pack(packId), { signal })
      : undefined;
    if (!bytes) {
      for (const l of locations) {
        badBlobs.push(l.id);
        problems.push(`${l.id}: indexed in pack ${packId}, which does not exist`);
      }
      return;
    }
    packsChecked++;
    try {
      const { sealedHeaderLength } = decodePackPrefix(bytes);
      const sealed = bytes.subarray(PACK_PREFIX_BYTES, PACK_PREFIX_BYTES + sealedHeaderLength);
      const header = session.crypto.open(sealed, objectAad('pack-header', packId));
      const entries = decodePackHeader({
        header,
        dataStart: PACK_PREFIX_BYTES + sealed.length,
        packBytes: bytes.length,
      });
      const inHeader = new Set(entries.map((e) => `${e.id}@${e.offset}+${e.length}`));
      for (const l of locations)
        if (!inHeader.has(`${l.id}@${l.offset}+${l.length}`))
          problems.push(`pack ${packId}: its header does not list blob ${l.id} where the index puts it`);
    } catch {
      problems.push(`pack ${packId}: its header is unreadable (fails authentication or is malformed)`);
    }
    for (const l of locations) {
      blobsChecked++;
      try {
        const plain = await openRecord({
          crypto: session.crypto,
          entry: l,
          sealed: bytes.subarray(l.offset, l.offset + l.length),
        });
        bytesChecked += plain.length;
      } catch (error) {
        badBlobs.push(l.id);
        problems.push(error instanceof BlobCorrupt ? error.message : `${l.id}: ${(error as Error).message}`);
      }
    }
  });
  return { blobsChecked, bytesChecked, problems, packsChecked, badBlobs };
}
