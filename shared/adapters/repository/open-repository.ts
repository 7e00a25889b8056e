/**
 * The data mover's repository over any ObjectStore (docs/repository-format.md): opens (or creates)
 * the format object, unwraps the data key, loads the index, and serves writers, blobs, snapshot
 * manifests, garbage collection and verify.
 */
import type { FileChunking, RepositoryFormat } from '../../contracts/repository.js';
import { manifestIdSchema, snapshotManifestSchema } from '../../contracts/repository.js';
import {
  BlobCorrupt,
  BlobMissing,
  LifeboatError,
  RepositoryObjectCorrupt,
  SnapshotManifestMissing,
  ValidationFailed,
} from '../../domain/errors.js';
import { repositoryKeyId, repositoryKeys } from '../../domain/storage/keys.js';
import type { Clock } from '../../ports/clock.js';
import type { KeyWrapper } from '../../ports/key-wrapper.js';
import type { ObjectStore } from '../../ports/object-store.js';
import type {
  BlobId,
  GcOptions,
  ManifestSummary,
  Repository,
  SnapshotManifest,
} from '../../ports/repository.js';
import { systemClock } from '../system-clock.js';
import { readBlobsByPack } from './blob-reads.js';
import { mapBounded } from './bounded.js';
import { type NewRepositoryParameters, openFormat } from './format-object.js';
import { collectGarbage, type GcReportDetails } from './garbage-collector.js';
import { checkManifestBlobs } from './manifest-guard.js';
import type { TreeReferences } from './manifest-marker.js';
import { openRecord, readRecord } from './pack-io.js';
import { PackWriter, type PackWriterSettings } from './pack-writer.js';
import { OpenFailed, objectAad } from './repository-crypto.js';
import { RepositorySession } from './repository-session.js';
import { type VerifyReportDetails, verifyRepository } from './verify-repository.js';

export interface OpenRepositoryOptions {
  readonly store: ObjectStore;
  /** Wraps the data key: KmsKeyWrapper in AWS, LocalKeyWrapper for `lifeboat --local`. */
  readonly keys: KeyWrapper;
  /** Parameters of a repository created by this open; an existing one keeps its own. */
  readonly create?: NewRepositoryParameters;
  /** Packs uploaded at once by each writer (default 4). */
  readonly uploadConcurrency?: number;
  /** Durable packs per index object a writer writes before its flush (default 32). */
  readonly indexEveryPacks?: number;
  /** How long a writer's lease lasts unrenewed (default 10 minutes; renewed every quarter). */
  readonly leaseTtlMs?: number;
  /**
   * Clock skew garbage collection allows between itself and writers: a lease counts as live
   * until this long after its expiry (default 2 minutes).
   */
  readonly clockSkewMs?: number;
  /**
   * The blobs a file-mode tree blob names, split into `nested` (read and followed) and `data`:
   * file mode's own reader (domain/file-tree fileTreeChildren) unless another is given.
   */
  readonly fileTreeReferences?: TreeReferences;
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

/** The stored parameters another component may need (file mode reads its chunking here). */
export interface RepositoryParameters {
  readonly repositoryId: string;
  readonly formatVersion: number;
  readonly packTargetBytes: number;
  readonly maxBlobBytes: number;
  readonly fileChunking?: FileChunking;
  readonly keyScheme: string;
  readonly keyId: string;
}

const MANIFEST_CONCURRENCY = 8;

class PackRepository implements Repository {
  readonly parameters: RepositoryParameters;
  private readonly session: RepositorySession;
  private readonly settings: PackWriterSettings;
  private readonly writers = new Set<PackWriter>();
  private readonly options: OpenRepositoryOptions;

  constructor(options: {
    session: RepositorySession;
    format: RepositoryFormat;
    open: OpenRepositoryOptions;
  }) {
    const { format, open } = options;
    this.session = options.session;
    this.options = open;
    this.parameters = {
      repositoryId: format.repositoryId,
      formatVersion: format.formatVersion,
      packTargetBytes: format.packTargetBytes,
      maxBlobBytes: format.maxBlobBytes,
      ...(format.fileChunking ? { fileChunking: format.fileChunking } : {}),
      keyScheme: format.keyWrapping.scheme,
      keyId: format.keyWrapping.keyId,
    };
    this.settings = {
      packTargetBytes: format.packTargetBytes,
      maxBlobBytes: format.maxBlobBytes,
      uploadConcurrency: Math.max(1, open.uploadConcurrency ?? 4),
      indexEveryPacks: Math.max(1, open.indexEveryPacks ?? 32),
      leaseTtlMs: open.leaseTtlMs ?? 10 * 60_000,
    };
  }

  writer(): PackWriter {
    const writer = new PackWriter({ session: this.session, settings: this.settings });
    this.writers.add(writer);
    const close = writer.close.bind(writer);
    writer.close = async (options) => {
      this.writers.delete(writer);
      await close(options);
    };
    return writer;
  }

  async getBlob(id: BlobId, options?: { signal?: AbortSignal }): Promise<Uint8Array> {
    const signal = options?.signal;
    let corrupt: unknown;
    await this.session.indexLoaded(signal);
    for (let attempt = 0; attempt < 2; attempt++) {
      // A blob another process indexed since this one loaded the index: refresh once and look again.
      if (attempt > 0) await this.session.index.refresh(signal);
      // A blob stored in several packs is read from the next one when a pack is gone or its copy bad.
      for (const location of this.session.index.locations(id)) {
        const sealed = await readRecord({
          store: this.session.store,
          packId: location.packId,
          entry: location,
          signal,
        });
        if (!sealed) continue;
        try {
          return await openRecord({ crypto: this.session.crypto, entry: location, sealed });
        } catch (error) {
          if (!(error instanceof BlobCorrupt)) throw error;
          corrupt ??= error;
        }
      }
      if (corrupt) throw corrupt;
    }
    throw new BlobMissing(id);
  }

  async getBlobs(ids: readonly BlobId[], options?: { signal?: AbortSignal }): Promise<Uint8Array[]> {
    const found = new Map<BlobId, Uint8Array>();
    await this.forEachBlob(
      ids,
      async (id, data) => {
        found.set(id, data);
      },
      { concurrency: 1, ...(options?.signal ? { signal: options.signal } : {}) },
    );
    return ids.map((id) => found.get(id) as Uint8Array);
  }

  forEachBlob(
    ids: Iterable<BlobId>,
    onBlob: (id: BlobId, data: Uint8Array) => Promise<void>,
    options?: { concurrency?: number; signal?: AbortSignal },
  ): Promise<void> {
    return readBlobsByPack({
      session: this.session,
      ids,
      onBlob,
      getBlob: (id, signal) => this.getBlob(id, signal ? { signal } : {}),
      concurrency: options?.concurrency ?? 4,
      signal: options?.signal,
    });
  }

  async writeManifest(manifest: SnapshotManifest, options?: { signal?: AbortSignal }): Promise<void> {
    const signal = options?.signal;
    const parsed = snapshotManifestSchema.safeParse(manifest);
    if (!parsed.success)
      throw new ValidationFailed(
        parsed.error.issues.map((i) => ({ path: `manifest.${i.path.join('.')}`, message: i.message })),
      );
    // Written under a live lease: garbage collection reads it before deleting what it names.
    const writers = [...this.writers].filter((w) => w.lease.isActive());
    if (writers.length === 0)
      throw new LifeboatError(
        `manifest ${manifest.id}: a manifest is written while its writer is open (after flush, before close)`,
      );
    // A writer whose lease lapsed may have deduplicated against packs a collector has deleted.
    for (const writer of writers) await writer.lease.assertHeld(signal);
    await checkManifestBlobs({
      session: this.session,
      manifest: parsed.data,
      writerIds: new Set(writers.map((w) => w.lease.writerId)),
      getBlob: (id, s) => this.getBlob(id, { signal: s }),
      signal,
    });
    const body = Buffer.from(JSON.stringify(parsed.data));
    await this.session.store.put(
      repositoryKeys.snapshot(manifest.id),
      this.session.crypto.seal(body, objectAad('snapshot', manifest.id)),
      { ifNoneMatch: true, signal },
    );
  }

  async readManifest(id: string, options?: { signal?: AbortSignal }): Promise<SnapshotManifest> {
    if (!manifestIdSchema.safeParse(id).success) throw new SnapshotManifestMissing(id);
    const manifest = await this.tryReadManifest(id, options?.signal);
    if (!manifest) throw new SnapshotManifestMissing(id);
    return manifest;
  }

  private async tryReadManifest(id: string, signal?: AbortSignal): Promise<SnapshotManifest | undefined> {
    const key = repositoryKeys.snapshot(id);
    const sealed = await this.session.store.get(key, { signal });
    if (!sealed) return undefined;
    try {
      const json: unknown = JSON.parse(
        Buffer.from(this.session.crypto.open(sealed, objectAad('snapshot', id))).toString('utf8'),
      );
      return snapshotManifestSchema.parse(json);
    } catch (error) {
      const reason = error instanceof OpenFailed ? 'fails authentication' : 'not a snapshot manifest';
      throw new RepositoryObjectCorrupt(key, reason, { cause: error });
    }
  }

  /** Every manifest id, from the listing. */
  async manifestIds(signal?: AbortSignal): Promise<string[]> {
    const keys = await this.session.store.list(repositoryKeys.snapshotsDir, { signal });
    return keys.filter((k) => k.endsWith('.json')).map(repositoryKeyId);
  }

  async listManifests(options?: { signal?: AbortSignal }): Promise<readonly ManifestSummary[]> {
    const signal = options?.signal;
    const ids = await this.manifestIds(signal);
    const manifests = await mapBounded(ids, MANIFEST_CONCURRENCY, (id) => this.tryReadManifest(id, signal));
    return manifests.flatMap((m) =>
      m ? [{ id: m.id, kind: m.kind, createdAt: m.createdAt, tags: m.tags }] : [],
    );
  }

  async deleteManifest(id: string, options?: { signal?: AbortSignal }): Promise<void> {
    if (!manifestIdSchema.safeParse(id).success) return;
    await this.session.store.delete(repositoryKeys.snapshot(id), { signal: options?.signal });
  }

  collectGarbage(options?: GcOptions): Promise<GcReportDetails> {
    return collectGarbage({
      session: this.session,
      manifestIds: (signal) => this.manifestIds(signal),
      readManifest: (id, signal) => this.tryReadManifest(id, signal),
      getBlob: (id, signal) => this.getBlob(id, { signal }),
      fileTreeReferences: this.options.fileTreeReferences,
      leaseTtlMs: this.settings.leaseTtlMs,
      clockSkewMs: this.options.clockSkewMs ?? 2 * 60_000,
      packTargetBytes: this.settings.packTargetBytes,
      ...(options?.repackDeadFraction !== undefined
        ? { repackDeadFraction: options.repackDeadFraction }
        : {}),
      signal: options?.signal,
    });
  }

  verify(options?: { signal?: AbortSignal }): Promise<VerifyReportDetails> {
    return verifyRepository({ session: this.session, signal: options?.signal });
  }
}

/** The port's Repository, with its stored parameters and writers that can be closed. */
export type OpenedRepository = Omit<Repository, 'writer' | 'collectGarbage' | 'verify'> & {
  readonly parameters: RepositoryParameters;
  writer(): PackWriter;
  collectGarbage(options?: GcOptions): Promise<GcReportDetails>;
  verify(options?: { signal?: AbortSignal }): Promise<VerifyReportDetails>;
};

/** Opens the repository in the store, creating it (format object, data key) on first use. */
export async function openRepository(options: OpenRepositoryOptions): Promise<OpenedRepository> {
  const clock = options.clock ?? systemClock;
  const { format, crypto } = await openFormat({
    store: options.store,
    keys: options.keys,
    create: options.create,
    now: clock.now(),
    signal: options.signal,
  });
  const session = new RepositorySession({ store: options.store, crypto, clock });
  // Loaded behind the caller's next requests (a manifest read, a writer's lease): reads wait for
  // it; a writer refreshes again after its lease anyway.
  session.refresh(options.signal).catch(() => undefined);
  return new PackRepository({ session, format, open: options });
}
