/**
 * The data mover's repository: a content-addressed, deduplicated, compressed and encrypted store
 * of volume data under `plugins/lifeboat/repository/` of the backup bucket (docs/repository-format.md).
 * Block mode and file mode both write blobs here and describe what they wrote with one snapshot
 * manifest per volume. Implemented over an ObjectStore by adapters/repository.
 *
 * Never: one storage object per blob (blobs are packed), a blob returned without its hash checked,
 * a manifest written before every blob it names is durable.
 */

/** A blob's content id: a keyed hash of its plaintext, lowercase hex. */
export type BlobId = string;

export interface BlobWrite {
  readonly id: BlobId;
  /** False when a blob with this id was already stored (deduplicated); nothing was uploaded. */
  readonly stored: boolean;
  readonly rawBytes: number;
  /** Bytes after compression and encryption; 0 when deduplicated. */
  readonly storedBytes: number;
}

/** Figures of one writer session, reported in progress and in volumes-info. */
export interface WriteStats {
  readonly blobsStored: number;
  readonly blobsDeduplicated: number;
  readonly rawBytes: number;
  readonly storedBytes: number;
  readonly packsWritten: number;
}

export interface RepositoryWriter {
  /** The id data would get, without storing it. */
  blobId(data: Uint8Array): BlobId;
  /** Whether a blob with this id is stored (or queued in this writer's open pack). */
  has(id: BlobId): boolean;
  /**
   * Stores data unless a blob with its id exists. Blobs are gathered into packs; memory stays
   * bounded by the pack size and the upload concurrency, whatever the volume's size.
   */
  putBlob(
    data: Uint8Array,
    options?: {
      signal?: AbortSignal;
      /**
       * The data's SHA-256, when the caller computed it from these very bytes (block mode: while
       * checking the checksum EBS sends): the id is derived from it, and the data not hashed again.
       */
      sha256?: Uint8Array;
    },
  ): Promise<BlobWrite>;
  /** Uploads open packs and their index entries: every blob put so far is durable afterwards. */
  flush(options?: { signal?: AbortSignal }): Promise<void>;
  stats(): WriteStats;
  /**
   * Ends the session after its manifest is written: releases the writer's lease, so garbage
   * collection need not wait for it to expire. Blobs not flushed are not stored.
   */
  close?(options?: { signal?: AbortSignal }): Promise<void>;
}

export interface RepositoryReader {
  /** The blob's plaintext; its hash is checked (BlobCorrupt), a missing blob is BlobMissing. */
  getBlob(id: BlobId, options?: { signal?: AbortSignal }): Promise<Uint8Array>;
  /**
   * Several blobs' plaintexts, in the order asked, each checked as getBlob checks it. Blobs stored
   * near each other in one pack come with one ranged read (a restore reads a volume's blocks in
   * order, and a backup wrote them in order), so a restore makes far fewer requests than blobs.
   */
  getBlobs(ids: readonly BlobId[], options?: { signal?: AbortSignal }): Promise<Uint8Array[]>;
  /**
   * Hands each distinct blob asked for to `onBlob` once, checked as getBlob checks it, as soon as
   * its pack range is read: a restore by pack. Blobs near each other in one pack come with one
   * ranged read, no range is read twice, `concurrency` reads are in flight (default 4), and memory
   * holds those reads only; `onBlob` runs for several blobs at once.
   */
  forEachBlob(
    ids: Iterable<BlobId>,
    onBlob: (id: BlobId, data: Uint8Array) => Promise<void>,
    options?: { concurrency?: number; signal?: AbortSignal },
  ): Promise<void>;
}

/** Where a block-mode snapshot's data came from; free-form facts kept for restore and describe. */
export interface BlockSource {
  readonly snapshotId: string;
  readonly volumeId?: string;
  readonly region?: string;
  readonly accountId?: string;
}

/**
 * One volume snapshot in the repository. Block mode: the volume's non-empty blocks, each a blob,
 * listed in block-map blobs (JSON arrays of `[blockIndex, blobId]`, ascending) so a manifest stays
 * small for any volume size. File mode: the root directory's tree blob.
 */
export type SnapshotManifest =
  | {
      readonly kind: 'block';
      readonly id: string;
      readonly createdAt: string;
      /** e.g. `velero.io/backup`, `velero.io/pvc-namespace`, `velero.io/pvc-name`. */
      readonly tags: Readonly<Record<string, string>>;
      readonly source: BlockSource;
      readonly volumeSizeBytes: number;
      readonly blockSizeBytes: number;
      readonly blockMap: readonly BlobId[];
      /** The manifest this one was made incrementally against. */
      readonly parent?: string;
      readonly stats: ManifestStats;
    }
  | {
      readonly kind: 'file';
      readonly id: string;
      readonly createdAt: string;
      readonly tags: Readonly<Record<string, string>>;
      readonly root: BlobId;
      readonly stats: ManifestStats;
    };

export interface ManifestStats {
  /** Bytes of data the snapshot holds (block mode: non-empty blocks; file mode: file contents). */
  readonly totalBytes: number;
  /** Bytes read from the source during this run (an incremental reads only what changed). */
  readonly bytesRead: number;
  readonly blocksRead?: number;
  readonly rawBytesStored: number;
  readonly storedBytes: number;
  readonly blobsDeduplicated: number;
}

export interface ManifestSummary {
  readonly id: string;
  readonly kind: 'block' | 'file';
  readonly createdAt: string;
  readonly tags: Readonly<Record<string, string>>;
}

export interface GcReport {
  readonly liveManifests: number;
  readonly packsKept: number;
  readonly packsDeleted: number;
  /** Sizes of the packs deleted (repacked ones included, once deleted). */
  readonly bytesFreed: number;
  /** Partly dead packs whose live blobs were copied into new packs (the old ones then go as dead). */
  readonly packsRepacked: number;
  readonly blobsCopied: number;
  /** Bytes of the new packs repacking wrote: the repository shrinks by bytesFreed - bytesCopied. */
  readonly bytesCopied: number;
  /** Packs left whole because a live blob failed its check, each naming the pack and blob. */
  readonly problems: readonly string[];
}

export interface GcOptions {
  readonly signal?: AbortSignal;
  /**
   * A pack with a live blob is repacked once its dead bytes reach this fraction of its size
   * (default 0.5; 1 turns repacking off).
   */
  readonly repackDeadFraction?: number;
}

export interface VerifyReport {
  readonly blobsChecked: number;
  readonly bytesChecked: number;
  /** Blob ids whose stored bytes do not match their id, or that an index names but no pack holds. */
  readonly problems: readonly string[];
}

export interface Repository extends RepositoryReader {
  /** A writer for one data-mover run; its blobs become visible to others at flush. */
  writer(): RepositoryWriter;
  /** Written once, after the writer flushed; the id is the manifest's own. */
  writeManifest(manifest: SnapshotManifest, options?: { signal?: AbortSignal }): Promise<void>;
  readManifest(id: string, options?: { signal?: AbortSignal }): Promise<SnapshotManifest>;
  listManifests(options?: { signal?: AbortSignal }): Promise<readonly ManifestSummary[]>;
  deleteManifest(id: string, options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Mark from live manifests, repack mostly dead packs, sweep unreferenced packs; safe while
   * writers run.
   */
  collectGarbage(options?: GcOptions): Promise<GcReport>;
  /** Reads every pack and checks every blob's hash against its id. */
  verify(options?: { signal?: AbortSignal }): Promise<VerifyReport>;
}
