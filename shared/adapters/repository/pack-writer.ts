/**
 * One writer session (one data-mover run): blobs deduplicated against the index it loaded after
 * taking its lease, sealed into an open pack, packs uploaded with bounded concurrency, and an
 * index object written for every few durable packs and at flush (never before its packs are
 * durable). Memory: the open pack (its target and one blob at most), at most `uploadConcurrency`
 * packs uploading, and the ids of blobs not yet indexed.
 * Never: a blob in a condemned pack counted as stored, a blob reported stored that no pack will hold.
 */
import { randomBytes } from 'node:crypto';
import { LifeboatError } from '../../domain/errors.js';
import type { PackInfo } from '../../domain/repository/index-segment.js';
import { segmentOfPacks } from '../../domain/repository/index-segment.js';
import type { PackEntry } from '../../domain/repository/pack.js';
import { repositoryKeys } from '../../domain/storage/keys.js';
import type { BlobWrite, RepositoryWriter, WriteStats } from '../../ports/repository.js';
import { assemblePack, type SealedRecord, sealRecord } from './pack-io.js';
import type { RepositorySession } from './repository-session.js';
import { WriterLeaseHandle } from './writer-lease.js';

export interface PackWriterSettings {
  readonly packTargetBytes: number;
  readonly maxBlobBytes: number;
  readonly uploadConcurrency: number;
  /** Durable packs gathered into one index object. */
  readonly indexEveryPacks: number;
  readonly leaseTtlMs: number;
}

export class PackWriter implements RepositoryWriter {
  readonly lease: WriterLeaseHandle;
  private readonly session: RepositorySession;
  private readonly settings: PackWriterSettings;
  private started: Promise<void> | undefined;
  private ready = false;
  private failure: unknown;
  /** Blobs put in this session and not yet in an index object (being sealed, open, uploading, durable). */
  private readonly pending = new Set<string>();
  private open: SealedRecord[] = [];
  private openBytes = 0;
  /** Plaintext bytes of blobs being sealed for the open pack. */
  private reserved = 0;
  private waiters: (() => void)[] = [];
  private readonly uploads = new Set<Promise<void>>();
  private durable: { pack: PackInfo; entries: readonly PackEntry[] }[] = [];
  private indexing: Promise<void> = Promise.resolve();
  private counts = { blobsStored: 0, blobsDeduplicated: 0, rawBytes: 0, storedBytes: 0, packsWritten: 0 };

  constructor(options: { session: RepositorySession; settings: PackWriterSettings }) {
    this.session = options.session;
    this.settings = options.settings;
    this.lease = new WriterLeaseHandle({
      store: options.session.store,
      clock: options.session.clock,
      ttlMs: options.settings.leaseTtlMs,
    });
    // Started at once, so the lease and index are usually ready by the first putBlob; a failure
    // surfaces there.
    this.start().catch(() => undefined);
  }

  /** Lease first, then what the lease protects: condemned packs, the index, orphan packs. */
  private start(signal?: AbortSignal): Promise<void> {
    this.started ??= (async () => {
      await this.lease.acquire(signal);
      await this.session.refresh(signal);
      await this.session.index.recover({
        skip: this.session.condemnedPacks(),
        // Like writeIndex: a writer stalled past its lease may index packs a collector deleted.
        beforeWrite: (s) => this.lease.assertHeld(s),
        signal,
      });
      await this.session.compactIfScattered(signal);
      this.ready = true;
    })();
    return this.started;
  }

  blobId(data: Uint8Array): string {
    return this.session.crypto.blobId(data);
  }

  has(id: string): boolean {
    // Before the lease and index are loaded, only this session's own blobs are known: a false
    // "no" costs a putBlob that deduplicates; a "yes" the lease does not protect could lose data.
    return this.pending.has(id) || (this.ready && this.session.usable(id));
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private full(): boolean {
    return this.openBytes >= this.settings.packTargetBytes;
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Waits until a blob of `bytes` may join the open pack, and reserves room for it: the open pack
   * plus the blobs being sealed for it stay within its target (one blob over at most), and a full
   * pack is sealed as soon as fewer than `uploadConcurrency` packs are uploading. However many
   * callers wait here, memory holds one open pack and `uploadConcurrency` uploading ones.
   */
  private async reserve(bytes: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      this.throwIfFailed();
      if (this.full()) {
        if (this.uploads.size < this.settings.uploadConcurrency) this.sealOpenPack(signal);
        else await this.changed();
        continue;
      }
      if (this.reserved > 0 && this.openBytes + this.reserved + bytes > this.settings.packTargetBytes) {
        await this.changed(); // the blobs being sealed fill this pack: wait for the next one
        continue;
      }
      this.reserved += bytes;
      return;
    }
  }

  async putBlob(
    data: Uint8Array,
    options?: { signal?: AbortSignal; sha256?: Uint8Array },
  ): Promise<BlobWrite> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    if (data.length > this.settings.maxBlobBytes)
      throw new LifeboatError(
        `a blob of ${data.length} bytes is larger than the repository's limit of ${this.settings.maxBlobBytes}`,
      );
    await this.start(signal);
    this.throwIfFailed();
    const id = options?.sha256 ? this.session.crypto.blobIdOfSha256(options.sha256) : this.blobId(data);
    if (this.has(id)) {
      this.counts.blobsDeduplicated++;
      return { id, stored: false, rawBytes: data.length, storedBytes: 0 };
    }
    this.pending.add(id);
    let reserved = 0;
    try {
      await this.reserve(data.length, signal);
      reserved = data.length;
      const record = await sealRecord({ crypto: this.session.crypto, id, data });
      signal?.throwIfAborted();
      this.reserved -= reserved;
      reserved = 0;
      this.open.push(record);
      this.openBytes += record.sealedLength;
      this.counts.blobsStored++;
      this.counts.rawBytes += data.length;
      this.counts.storedBytes += record.sealedLength;
      if (this.full() && this.uploads.size < this.settings.uploadConcurrency) this.sealOpenPack(signal);
      this.notify();
      return { id, stored: true, rawBytes: data.length, storedBytes: record.sealedLength };
    } catch (error) {
      // Another caller may already have deduplicated against this id: the session is void.
      this.reserved -= reserved;
      this.failure ??= error;
      this.notify();
      throw error;
    }
  }

  private sealOpenPack(signal?: AbortSignal): void {
    if (this.open.length === 0) return;
    const records = this.open;
    this.open = [];
    this.openBytes = 0;
    const upload: Promise<void> = this.upload(records, signal)
      .catch((error: unknown) => {
        this.failure ??= error;
      })
      .finally(() => {
        this.uploads.delete(upload);
        this.notify();
      });
    this.uploads.add(upload);
  }

  private async upload(records: readonly SealedRecord[], signal?: AbortSignal): Promise<void> {
    const packId = randomBytes(16).toString('hex');
    const { bytes, entries } = assemblePack({ crypto: this.session.crypto, packId, records });
    await this.session.store.put(repositoryKeys.pack(packId), bytes, { signal });
    this.counts.packsWritten++;
    this.durable.push({ pack: { id: packId, bytes: bytes.length }, entries });
    if (this.durable.length >= this.settings.indexEveryPacks) await this.writeIndex(signal);
  }

  /** One index object for every durable pack not indexed yet; one at a time. */
  private writeIndex(signal?: AbortSignal): Promise<void> {
    this.indexing = this.indexing.then(async () => {
      const packs = this.durable;
      if (packs.length === 0) return;
      // A writer whose lease lapsed (stalled past it) may hold packs a collector has condemned
      // and deleted meanwhile: an index naming them would point readers at nothing. It stops.
      await this.lease.assertHeld(signal);
      this.durable = [];
      await this.session.index.write(segmentOfPacks(packs), signal);
      for (const p of packs) for (const e of p.entries) this.pending.delete(e.id);
    });
    return this.indexing;
  }

  async flush(options?: { signal?: AbortSignal }): Promise<void> {
    const signal = options?.signal;
    await this.start(signal);
    this.throwIfFailed();
    while (this.uploads.size >= this.settings.uploadConcurrency) await Promise.race(this.uploads);
    this.sealOpenPack(signal);
    while (this.uploads.size > 0) await Promise.all(this.uploads);
    this.throwIfFailed();
    await this.writeIndex(signal);
    this.throwIfFailed();
    await this.lease.assertHeld(signal);
  }

  stats(): WriteStats {
    return { ...this.counts };
  }

  /** Ends the session: its lease is released. Blobs not flushed are not stored. */
  async close(options?: { signal?: AbortSignal }): Promise<void> {
    await this.started?.catch(() => undefined);
    await this.lease.release(options?.signal);
  }
}
