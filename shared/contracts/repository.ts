/**
 * The data mover repository's JSON objects, parsed wherever they are read back: the format
 * object, snapshot manifests (docs/repository-format.md), writer leases and garbage collection's
 * records. Binary objects (packs, indexes) are the domain's (repository/pack.ts, repository/index-segment.ts).
 */
import * as z from 'zod';

export const REPOSITORY_KIND = 'lifeboat-repository';
export const REPOSITORY_FORMAT_VERSION = 1;

const hex32 = z.string().regex(/^[0-9a-f]{32}$/, 'expected 32 lowercase hex digits');
export const blobIdSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'expected a blob id (64 lowercase hex digits)');
/** Manifest ids become object names: letters, digits, `.`, `_`, `-`, not starting with a dot. */
export const manifestIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'expected 1-200 letters, digits, ".", "_" or "-"');

/** Content-defined chunking parameters file mode fixes once per repository, so chunks dedupe. */
export const fileChunkingSchema = z.strictObject({
  algorithm: z.string().min(1),
  minBytes: z.number().int().positive(),
  averageBytes: z.number().int().positive(),
  maxBytes: z.number().int().positive(),
});
export type FileChunking = z.infer<typeof fileChunkingSchema>;

/** Only `kind` and `formatVersion`: read first, so a newer format is refused by name. */
export const repositoryFormatHead = z.object({ kind: z.string(), formatVersion: z.number() });

export const repositoryFormatSchema = z.strictObject({
  kind: z.literal(REPOSITORY_KIND),
  formatVersion: z.literal(REPOSITORY_FORMAT_VERSION),
  repositoryId: hex32,
  createdAt: z.string(),
  blobId: z.literal('HMAC-SHA256(SHA-256)'),
  keyDerivation: z.literal('HKDF-SHA256'),
  encryption: z.literal('AES-256-GCM'),
  compression: z.literal('deflate-raw'),
  packTargetBytes: z.number().int().min(1024),
  maxBlobBytes: z.number().int().positive(),
  fileChunking: fileChunkingSchema.optional(),
  keyWrapping: z.strictObject({
    scheme: z.string().min(1),
    keyId: z.string(),
    /** The data key wrapped by the scheme, base64. */
    wrappedKey: z.string().min(1),
  }),
});
export type RepositoryFormat = z.infer<typeof repositoryFormatSchema>;

const tags = z.record(z.string(), z.string());
/** A snapshot manifest's figures; the data mover's result repeats them. */
export const manifestStats = z.strictObject({
  totalBytes: z.number().nonnegative(),
  bytesRead: z.number().nonnegative(),
  blocksRead: z.number().int().nonnegative().optional(),
  rawBytesStored: z.number().nonnegative(),
  storedBytes: z.number().nonnegative(),
  blobsDeduplicated: z.number().int().nonnegative(),
});

export const snapshotManifestSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('block'),
    id: manifestIdSchema,
    createdAt: z.string(),
    tags,
    source: z.strictObject({
      snapshotId: z.string(),
      volumeId: z.string().optional(),
      region: z.string().optional(),
      accountId: z.string().optional(),
    }),
    volumeSizeBytes: z.number().int().nonnegative(),
    blockSizeBytes: z.number().int().positive(),
    blockMap: z.array(blobIdSchema),
    parent: z.string().optional(),
    stats: manifestStats,
  }),
  z.strictObject({
    kind: z.literal('file'),
    id: manifestIdSchema,
    createdAt: z.string(),
    tags,
    root: blobIdSchema,
    stats: manifestStats,
  }),
]);

/** A writer's claim that it may deduplicate against what it loaded; renewed while it runs. */
export const writerLeaseSchema = z.strictObject({
  writerId: hex32,
  startedAt: z.string(),
  /** ISO time in the writer's clock; garbage collection adds a clock-skew allowance. */
  expiresAt: z.string(),
});
export type WriterLease = z.infer<typeof writerLeaseSchema>;

/** Packs garbage collection found without a live blob, to be deleted once `blockers` are gone. */
export const condemnedRecordSchema = z.strictObject({
  recordId: hex32,
  createdAt: z.string(),
  packs: z.array(z.strictObject({ id: hex32, bytes: z.number().int().nonnegative() })),
  /** Writers whose lease existed once the record did: they may have loaded these packs. */
  blockers: z.array(hex32).optional(),
});
export type CondemnedRecord = z.infer<typeof condemnedRecordSchema>;

/**
 * Packs of copies repacking wrote: until the index names these copies alone, garbage collection
 * prefers them over any other location of the same blobs (a run stopped midway is finished alike).
 */
export const repackRecordSchema = z.strictObject({
  recordId: hex32,
  createdAt: z.string(),
  packs: z.array(z.strictObject({ id: hex32, bytes: z.number().int().nonnegative() })),
});
export type RepackRecord = z.infer<typeof repackRecordSchema>;

export const maintenanceLockSchema = z.strictObject({
  owner: hex32,
  purpose: z.string(),
  expiresAt: z.string(),
});
export type MaintenanceLock = z.infer<typeof maintenanceLockSchema>;
