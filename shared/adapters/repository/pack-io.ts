/**
 * Packs in and out of the object store: blob records sealed (compressed first when it helps),
 * packs assembled with their sealed header, headers read back with one ranged GET, and blob
 * records opened and checked — the AEAD tag, then the id recomputed from the plaintext.
 */
import { BlobCorrupt, RepositoryObjectCorrupt } from '../../domain/errors.js';
import { concatBytes, fromHex } from '../../domain/repository/bytes.js';
import type { PackInfo } from '../../domain/repository/index-segment.js';
import {
  decodePackHeader,
  decodePackPrefix,
  encodePackHeader,
  encodePackPrefix,
  layoutPack,
  PACK_PREFIX_BYTES,
  type PackEntry,
  type PackRecord,
} from '../../domain/repository/pack.js';
import { repositoryKeys } from '../../domain/storage/keys.js';
import type { ObjectStore } from '../../ports/object-store.js';
import {
  compressBlob,
  decompressBlob,
  OpenFailed,
  objectAad,
  type RepositoryCrypto,
  SEAL_OVERHEAD,
} from './repository-crypto.js';

/** What one ranged GET of a pack's start fetches: the prefix and, usually, the whole header. */
const HEADER_PROBE_BYTES = 64 * 1024;

/** A record with its sealed bytes, in parts. */
export interface SealedRecord extends PackRecord {
  readonly parts: readonly Uint8Array[];
}

export async function sealRecord(options: {
  crypto: RepositoryCrypto;
  id: string;
  data: Uint8Array;
}): Promise<SealedRecord> {
  const { bytes, compressed } = await compressBlob(options.data);
  const parts = options.crypto.sealParts(bytes, fromHex(options.id) ?? new Uint8Array(0));
  const sealedLength = parts.reduce((n, p) => n + p.length, 0);
  return { id: options.id, parts, sealedLength, rawLength: options.data.length, compressed };
}

export function assemblePack(options: {
  crypto: RepositoryCrypto;
  packId: string;
  records: readonly SealedRecord[];
}): { bytes: Uint8Array; entries: PackEntry[] } {
  const { entries, totalBytes } = layoutPack({ records: options.records, sealOverhead: SEAL_OVERHEAD });
  const header = options.crypto.seal(encodePackHeader(entries), objectAad('pack-header', options.packId));
  const bytes = concatBytes([
    encodePackPrefix(header.length),
    header,
    ...options.records.flatMap((r) => r.parts),
  ]);
  if (bytes.length !== totalBytes) throw new Error('pack layout and assembled bytes disagree');
  return { bytes, entries };
}

async function range(options: {
  store: ObjectStore;
  key: string;
  offset: number;
  length: number;
  signal?: AbortSignal;
}): Promise<Uint8Array | undefined> {
  const { store, key, offset, length, signal } = options;
  if (store.getRange) return store.getRange(key, { offset, length }, { signal });
  const whole = await store.get(key, { signal });
  return whole?.subarray(offset, offset + length);
}

/** A pack's blobs from its own header (recovery, GC, verify); undefined when the pack is gone. */
export async function readPackHeader(options: {
  store: ObjectStore;
  crypto: RepositoryCrypto;
  packId: string;
  signal?: AbortSignal;
}): Promise<{ pack: PackInfo; entries: PackEntry[] } | undefined> {
  const { store, crypto, packId, signal } = options;
  const key = repositoryKeys.pack(packId);
  const start = await range({ store, key, offset: 0, length: HEADER_PROBE_BYTES, signal });
  if (!start) return undefined;
  let sealedHeader: Uint8Array;
  try {
    const { sealedHeaderLength, headerStart } = decodePackPrefix(start);
    const end = headerStart + sealedHeaderLength;
    const rest = end <= start.length ? start : await range({ store, key, offset: 0, length: end, signal });
    if (!rest || rest.length < end) throw new Error('pack shorter than its header');
    sealedHeader = rest.subarray(headerStart, end);
  } catch (error) {
    throw new RepositoryObjectCorrupt(key, (error as Error).message, { cause: error });
  }
  let entries: PackEntry[];
  try {
    const header = crypto.open(sealedHeader, objectAad('pack-header', packId));
    entries = decodePackHeader({ header, dataStart: PACK_PREFIX_BYTES + sealedHeader.length });
  } catch (error) {
    const reason = error instanceof OpenFailed ? 'its header fails authentication' : (error as Error).message;
    throw new RepositoryObjectCorrupt(key, reason, { cause: error });
  }
  const bytes = entries.reduce(
    (end, e) => Math.max(end, e.offset + e.length),
    PACK_PREFIX_BYTES + sealedHeader.length,
  );
  return { pack: { id: packId, bytes }, entries };
}

/** A record's plaintext, checked: tag, decompression to the recorded length, id recomputed. */
export async function openRecord(options: {
  crypto: RepositoryCrypto;
  entry: PackEntry;
  sealed: Uint8Array;
}): Promise<Uint8Array> {
  const { crypto, entry, sealed } = options;
  if (sealed.length !== entry.length) throw new BlobCorrupt(entry.id, 'its record is truncated');
  let stored: Uint8Array;
  try {
    stored = crypto.open(sealed, fromHex(entry.id) ?? new Uint8Array(0));
  } catch (error) {
    throw new BlobCorrupt(entry.id, 'its record fails authentication', { cause: error });
  }
  let plain: Uint8Array;
  try {
    plain = await decompressBlob({ bytes: stored, compressed: entry.compressed, rawLength: entry.rawLength });
  } catch (error) {
    throw new BlobCorrupt(entry.id, 'its record does not decompress', { cause: error });
  }
  if (plain.length !== entry.rawLength) throw new BlobCorrupt(entry.id, 'its plaintext has the wrong length');
  if (crypto.blobId(plain) !== entry.id)
    throw new BlobCorrupt(entry.id, 'its plaintext does not hash to its id');
  return plain;
}

/** Bytes [offset, offset + length) of a pack; undefined when the pack is gone. */
export async function readRange(options: {
  store: ObjectStore;
  packId: string;
  offset: number;
  length: number;
  signal?: AbortSignal | undefined;
}): Promise<Uint8Array | undefined> {
  return range({
    store: options.store,
    key: repositoryKeys.pack(options.packId),
    offset: options.offset,
    length: options.length,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

export async function readRecord(options: {
  store: ObjectStore;
  packId: string;
  entry: PackEntry;
  signal?: AbortSignal;
}): Promise<Uint8Array | undefined> {
  return range({
    store: options.store,
    key: repositoryKeys.pack(options.packId),
    offset: options.entry.offset,
    length: options.entry.length,
    signal: options.signal,
  });
}
