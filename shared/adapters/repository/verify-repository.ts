/**
 * verify: reads every pack once and checks every blob the index names in it (AEAD tag,
 * decompression, id recomputed from the plaintext), and each pack's own header. Problems are
 * reported, never thrown: one corrupt blob does not hide the others. Memory: one pack per read
 * in flight.
 */
import { BlobCorrupt } from '../../domain/errors.js';
import { type BlobLocation, locationsOf } from '../../domain/repository/index-segment.js';
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

/** What the checks found so far (packs are checked concurrently, each adding to it). */
interface Findings {
  readonly problems: string[];
  readonly badBlobs: string[];
  blobsChecked: number;
  bytesChecked: number;
  packsChecked: number;
}

export async function verifyRepository(options: {
  session: RepositorySession;
  signal?: AbortSignal;
}): Promise<VerifyReportDetails> {
  const { session, signal } = options;
  await session.refresh(signal);
  const byPack = locationsByPack(session);
  const listed = new Set(
    (await session.store.list(repositoryKeys.packsDir, { signal })).map(repositoryKeyId),
  );
  const found: Findings = { problems: [], badBlobs: [], blobsChecked: 0, bytesChecked: 0, packsChecked: 0 };
  await mapBounded([...byPack], READ_CONCURRENCY, ([packId, locations]) =>
    checkPack({ session, listed, packId, locations, found, signal }),
  );
  const { blobsChecked, bytesChecked, problems, packsChecked, badBlobs } = found;
  return { blobsChecked, bytesChecked, problems, packsChecked, badBlobs };
}

/** Every location the index names, a blob's copies in other packs included, by pack. */
function locationsByPack(session: RepositorySession): Map<string, BlobLocation[]> {
  const byPack = new Map<string, BlobLocation[]>();
  for (const level of session.index.levels())
    for (const location of locationsOf(level)) {
      const list = byPack.get(location.packId) ?? [];
      list.push(location);
      byPack.set(location.packId, list);
    }
  return byPack;
}

/** Reads one pack (if it is listed) and checks its header and the blobs the index puts in it. */
async function checkPack(options: {
  session: RepositorySession;
  listed: ReadonlySet<string>;
  packId: string;
  locations: readonly BlobLocation[];
  found: Findings;
  signal: AbortSignal | undefined;
}): Promise<void> {
  const { session, packId, locations, found, signal } = options;
  signal?.throwIfAborted();
  const bytes = options.listed.has(packId)
    ? await session.store.get(repositoryKeys.pack(packId), { signal })
    : undefined;
  if (!bytes) {
    for (const l of locations) {
      found.badBlobs.push(l.id);
      found.problems.push(`${l.id}: indexed in pack ${packId}, which does not exist`);
    }
    return;
  }
  found.packsChecked++;
  checkHeader({ session, packId, bytes, locations, found });
  await checkBlobs({ session, bytes, locations, found });
}

/** The pack's own header must list every blob where the index puts it. */
function checkHeader(options: {
  session: RepositorySession;
  packId: string;
  bytes: Uint8Array;
  locations: readonly BlobLocation[];
  found: Findings;
}): void {
  const { session, packId, bytes, found } = options;
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
    for (const l of options.locations)
      if (!inHeader.has(`${l.id}@${l.offset}+${l.length}`))
        found.problems.push(`pack ${packId}: its header does not list blob ${l.id} where the index puts it`);
  } catch {
    found.problems.push(`pack ${packId}: its header is unreadable (fails authentication or is malformed)`);
  }
}

/** Opens every blob the index puts in the pack (tag, decompression, id). */
async function checkBlobs(options: {
  session: RepositorySession;
  bytes: Uint8Array;
  locations: readonly BlobLocation[];
  found: Findings;
}): Promise<void> {
  const { session, bytes, found } = options;
  for (const l of options.locations) {
    found.blobsChecked++;
    try {
      const plain = await openRecord({
        crypto: session.crypto,
        entry: l,
        sealed: bytes.subarray(l.offset, l.offset + l.length),
      });
      found.bytesChecked += plain.length;
    } catch (error) {
      found.badBlobs.push(l.id);
      found.problems.push(
        error instanceof BlobCorrupt ? error.message : `${l.id}: ${(error as Error).message}`,
      );
    }
  }
}
