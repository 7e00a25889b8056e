/**
 * Garbage collection's writer for repacking (docs/repository-format.md, "Repacking"): blob records
 * already checked are copied byte for byte into new packs — a record's seal names its blob, not
 * its pack, so it opens in any pack, and nothing is decompressed, compressed or encrypted again —
 * under a lease of its own like any writer. It never deduplicates: every record given is stored,
 * in packs no condemnation of the run can name. Each pack is announced before its upload (the
 * repack record); it does not index them: repacking does, with an index naming the copies alone. Memory: the open pack (its target and one record at most)
 * and the entries of the packs written, as index segments (49 bytes a blob).
 */
import { randomBytes } from 'node:crypto';
import { mergeSegments } from '../../domain/repository/index-merge.js';
import {
  EMPTY_SEGMENT,
  type IndexSegment,
  type PackInfo,
  segmentOfPacks,
} from '../../domain/repository/index-segment.js';
import type { PackEntry } from '../../domain/repository/pack.js';
import { repositoryKeys } from '../../domain/storage/keys.js';
import { assemblePack, type SealedRecord } from './pack-io.js';
import type { RepositorySession } from './repository-session.js';
import { WriterLeaseHandle } from './writer-lease.js';

export interface CopiedPacks {
  readonly packs: readonly PackInfo[];
  /** Where every copy lies. */
  readonly copies: IndexSegment;
  readonly blobsCopied: number;
  /** Bytes of the packs written (records and headers). */
  readonly bytesWritten: number;
}

export class PackCopier {
  readonly lease: WriterLeaseHandle;
  private readonly session: RepositorySession;
  private readonly packTargetBytes: number;
  private open: SealedRecord[] = [];
  private openBytes = 0;
  private readonly packs: PackInfo[] = [];
  private readonly segments: IndexSegment[] = [];
  private blobsCopied = 0;
  private readonly beforeUpload: (packs: readonly PackInfo[], signal?: AbortSignal) => Promise<void>;

  constructor(options: {
    session: RepositorySession;
    packTargetBytes: number;
    leaseTtlMs: number;
    /** Called with every pack written so far and the next one, before that one is uploaded. */
    beforeUpload: (packs: readonly PackInfo[], signal?: AbortSignal) => Promise<void>;
  }) {
    this.session = options.session;
    this.packTargetBytes = options.packTargetBytes;
    this.beforeUpload = options.beforeUpload;
    this.lease = new WriterLeaseHandle({
      store: options.session.store,
      clock: options.session.clock,
      ttlMs: options.leaseTtlMs,
    });
  }

  start(signal?: AbortSignal): Promise<void> {
    return this.lease.acquire(signal);
  }

  /** Adds a checked record; its bytes are copied (the caller's buffer is not kept). */
  async add(options: { entry: PackEntry; sealed: Uint8Array; signal?: AbortSignal }): Promise<void> {
    const { entry, sealed } = options;
    this.open.push({
      id: entry.id,
      parts: [sealed.slice()],
      sealedLength: sealed.length,
      rawLength: entry.rawLength,
      compressed: entry.compressed,
    });
    this.openBytes += sealed.length;
    this.blobsCopied++;
    if (this.openBytes >= this.packTargetBytes) await this.upload(options.signal);
  }

  private async upload(signal?: AbortSignal): Promise<void> {
    if (this.open.length === 0) return;
    const records = this.open;
    this.open = [];
    this.openBytes = 0;
    const packId = randomBytes(16).toString('hex');
    const { bytes, entries } = assemblePack({ crypto: this.session.crypto, packId, records });
    const pack = { id: packId, bytes: bytes.length };
    await this.beforeUpload([...this.packs, pack], signal);
    await this.session.store.put(repositoryKeys.pack(packId), bytes, { signal });
    this.packs.push(pack);
    this.segments.push(segmentOfPacks([{ pack, entries }]));
  }

  /** Uploads the open pack, checks the lease, and tells what was written. */
  async flush(signal?: AbortSignal): Promise<CopiedPacks> {
    await this.upload(signal);
    await this.lease.assertHeld(signal);
    return {
      packs: [...this.packs],
      copies: this.segments.length === 0 ? EMPTY_SEGMENT : mergeSegments({ segments: this.segments }),
      blobsCopied: this.blobsCopied,
      bytesWritten: this.packs.reduce((n, p) => n + p.bytes, 0),
    };
  }

  close(signal?: AbortSignal): Promise<void> {
    return this.lease.release(signal);
  }
}
