/**
 * The data mover's job and what it reports (docs/data-mover.md). A job arrives as JSON in the
 * container's `LIFEBOAT_DATA_MOVER_JOB` variable (the state machine's container override) or in a
 * file named by `--job-file`; the progress document, the block-backup checkpoint and the cancel
 * marker live in the store's working data under the job's id (storage/keys.ts: dataMoverWorkKeys).
 * Every problem of a job is reported by its field path. Never: a secret in a job (keys are named,
 * never given), or a job that reaches outside its repository and its source or target.
 */
import * as z from 'zod';
import { problemsOf } from './kubernetes.js';
import { manifestIdSchema, manifestStats } from './repository.js';

/** The container variable carrying the job. */
export const DATA_MOVER_JOB_VARIABLE = 'LIFEBOAT_DATA_MOVER_JOB';

/** The container command's exit codes (docs/data-mover.md). */
export const DATA_MOVER_EXIT = {
  completed: 0,
  /** The progress document says why; a retryable failure has `error.retryable`. */
  failed: 1,
  /** The job or the command line is invalid; stderr names each field. */
  invalid: 2,
  cancelled: 3,
  /** `verify` ran to its end and found blobs that are missing or fail their check. */
  verifyProblems: 4,
} as const;

export const DATA_MOVER_KINDS = [
  'block-backup',
  'block-restore',
  'file-backup',
  'file-restore',
  'verify',
  'gc',
] as const;
export type DataMoverKind = (typeof DATA_MOVER_KINDS)[number];

/** Job ids name objects (work keys) and idempotency tokens: the manifest id alphabet. */
const jobId = manifestIdSchema;
const awsRegion = z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'expected an AWS region, e.g. us-east-1');
const roleArn = z
  .string()
  .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/, 'expected an IAM role ARN');
const kmsKey = z
  .string()
  .regex(/^(arn:aws[a-z-]*:kms:|alias\/|[0-9a-f-]{36}$)/, 'expected a KMS key id, ARN or alias');
const absolutePath = z.string().regex(/^\//, 'expected an absolute path');

/**
 * Where the repository is (an S3 bucket and prefix, or a directory for `lifeboat --local`) and
 * what wraps its data key (a KMS key, or a local key file). Exactly one of each pair.
 */
export const repositoryLocation = z
  .strictObject({
    bucket: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name')
      .optional(),
    /** The storage location's prefix (the repository is under `<prefix>/plugins/lifeboat/repository/`). */
    prefix: z.string().max(512).optional(),
    region: awsRegion.optional(),
    directory: absolutePath.optional(),
    kmsKeyId: kmsKey.optional(),
    keyFile: absolutePath.optional(),
  })
  .superRefine((r, ctx) => {
    if ((r.bucket === undefined) === (r.directory === undefined))
      ctx.addIssue({ code: 'custom', path: ['bucket'], message: 'give either bucket or directory' });
    if (r.directory !== undefined && (r.prefix !== undefined || r.region !== undefined))
      ctx.addIssue({ code: 'custom', path: ['directory'], message: 'a directory takes no prefix or region' });
    if ((r.kmsKeyId === undefined) === (r.keyFile === undefined))
      ctx.addIssue({ code: 'custom', path: ['kmsKeyId'], message: 'give either kmsKeyId or keyFile' });
  });
export type RepositoryLocation = z.infer<typeof repositoryLocation>;

/** What the job is about, as Velero tags volume data: `velero.io/backup`, `velero.io/restore`, … */
const jobTags = z.strictObject({
  backup: z.string().min(1).max(253).optional(),
  restore: z.string().min(1).max(253).optional(),
  pvcNamespace: z.string().min(1).max(63).optional(),
  pvcName: z.string().min(1).max(253).optional(),
});

/**
 * Where a job keeps its working data (progress, checkpoint, cancel marker) when not beside its
 * repository: a DR deployment's own bucket, the repository (the source's) being read only there.
 */
export const workLocation = z
  .strictObject({
    bucket: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name')
      .optional(),
    prefix: z.string().max(512).optional(),
    region: awsRegion.optional(),
    directory: absolutePath.optional(),
  })
  .superRefine((r, ctx) => {
    if ((r.bucket === undefined) === (r.directory === undefined))
      ctx.addIssue({ code: 'custom', path: ['bucket'], message: 'give either bucket or directory' });
    if (r.directory !== undefined && (r.prefix !== undefined || r.region !== undefined))
      ctx.addIssue({ code: 'custom', path: ['directory'], message: 'a directory takes no prefix or region' });
  });
export type WorkLocation = z.infer<typeof workLocation>;

const common = {
  jobId,
  repository: repositoryLocation,
  /** The working data's own place (default: the repository's store); the repository is then read only. */
  work: workLocation.optional(),
  tags: jobTags.optional(),
  /** EBS calls or blob reads in flight (default 32 for blocks, 4 for files). */
  concurrency: z.number().int().min(1).max(256).optional(),
  /** How often the progress document is rewritten (default 2000 ms). */
  progressIntervalMs: z.number().int().min(100).max(60_000).optional(),
  /** Least time between two block-backup checkpoints (default 30 s); each flushes the open pack. */
  checkpointIntervalMs: z.number().int().min(0).max(3_600_000).optional(),
};

const blockBackupJob = z.strictObject({
  kind: z.literal('block-backup'),
  ...common,
  /** The manifest to write (default: the job id). */
  manifestId: manifestIdSchema.optional(),
  source: z.strictObject({
    snapshotId: z.string().regex(/^snap-[0-9a-f]+$/, 'expected an EBS snapshot id'),
    volumeId: z
      .string()
      .regex(/^vol-[0-9a-f]+$/, 'expected an EBS volume id')
      .optional(),
    /** The snapshot's region (default: the task's). */
    region: awsRegion.optional(),
    accountId: z
      .string()
      .regex(/^\d{12}$/, 'expected a 12-digit account id')
      .optional(),
    /** A block manifest of an earlier snapshot of the same volume: only changed blocks are read. */
    parentManifestId: manifestIdSchema.optional(),
  }),
});

const blockRestoreJob = z.strictObject({
  kind: z.literal('block-restore'),
  ...common,
  manifestId: manifestIdSchema,
  /** What is written carries `velero.io/restore` (the task role may tag nothing else). */
  tags: jobTags.extend({ restore: z.string().min(1).max(253) }),
  target: z.strictObject({
    /** Default: the task's region. */
    region: awsRegion.optional(),
    /** Another account: a role there the task may assume (with its external id). */
    roleArn: roleArn.optional(),
    externalId: z.string().min(2).max(1224).optional(),
    /** Encrypts the new snapshot (and volume) with this key of the target. */
    kmsKeyArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:kms:/, 'expected a KMS key ARN')
      .optional(),
    encrypted: z.boolean().optional(),
    description: z.string().max(255).optional(),
    /** A volume from the new snapshot, in this zone. */
    volume: z
      .strictObject({
        availabilityZone: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+[a-z]$/, 'expected an availability zone'),
        volumeType: z.enum(['gp2', 'gp3', 'io1', 'io2', 'st1', 'sc1', 'standard']).optional(),
        iops: z.number().int().positive().optional(),
      })
      .optional(),
  }),
});

const fileBackupJob = z.strictObject({
  kind: z.literal('file-backup'),
  ...common,
  manifestId: manifestIdSchema.optional(),
  source: z.strictObject({
    /** The mounted directory. */
    path: absolutePath,
    /** A file manifest of the same tree: unchanged files are not read. */
    parentManifestId: manifestIdSchema.optional(),
  }),
});

const fileRestoreJob = z.strictObject({
  kind: z.literal('file-restore'),
  ...common,
  manifestId: manifestIdSchema,
  target: z.strictObject({
    path: absolutePath,
    /** Restore uid/gid (default: when running as root). */
    ownership: z.boolean().optional(),
  }),
});

const verifyJob = z.strictObject({ kind: z.literal('verify'), ...common });

/**
 * A pack at least this dead (its dead bytes over its size) has its live blobs copied into new
 * packs and is deleted; 1 turns repacking off. Default one half (docs/repository-format.md).
 */
const NOT_A_FRACTION = 'must be a fraction in (0, 1] (1 turns repacking off)';
export const repackDeadFraction = z
  .number({ error: NOT_A_FRACTION })
  .gt(0, NOT_A_FRACTION)
  .lte(1, NOT_A_FRACTION);

const gcJob = z.strictObject({
  kind: z.literal('gc'),
  ...common,
  repackDeadFraction: repackDeadFraction.optional(),
});

/** The jobs that only read their repository, so may keep their working data elsewhere (`work`). */
export const READ_ONLY_KINDS: readonly DataMoverKind[] = ['block-restore', 'file-restore', 'verify'];

export const dataMoverJob = z
  .discriminatedUnion('kind', [
    blockBackupJob,
    blockRestoreJob,
    fileBackupJob,
    fileRestoreJob,
    verifyJob,
    gcJob,
  ])
  .superRefine((job, ctx) => {
    // A repository read where it cannot be written (a DR deployment's source): reads only.
    if (job.work && !READ_ONLY_KINDS.includes(job.kind))
      ctx.addIssue({
        code: 'custom',
        path: ['work'],
        message: `a ${job.kind} job writes its repository: only ${READ_ONLY_KINDS.join(', ')} jobs keep their working data elsewhere`,
      });
  });
export type DataMoverJob = z.infer<typeof dataMoverJob>;
export type DataMoverJobOf<K extends DataMoverKind> = Extract<DataMoverJob, { kind: K }>;

/** A job from untrusted JSON text: the job, or its problems by field path. */
export function parseDataMoverJob(
  text: string,
): { ok: true; job: DataMoverJob } | { ok: false; problems: { path: string; message: string }[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [{ path: '(job)', message: `not JSON: ${(error as Error).message}` }] };
  }
  const parsed = dataMoverJob.safeParse(json);
  return parsed.success ? { ok: true, job: parsed.data } : { ok: false, problems: problemsOf(parsed.error) };
}

/** What a finished job reports: the backup records it (volumes-info), the restore uses it. */
export const dataMoverResult = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('block-backup'),
    manifestId: z.string(),
    snapshotId: z.string(),
    incremental: z.boolean(),
    volumeSizeBytes: z.number().nonnegative(),
    stats: manifestStats,
    /** This run alone; `resumedAtBlock` > 0 when it continued a crashed run's checkpoint. */
    run: z.strictObject({
      blocksRead: z.number().int().nonnegative(),
      bytesRead: z.number().nonnegative(),
      resumedAtBlock: z.number().int().nonnegative(),
      /** True when the manifest already existed: nothing was read or written. */
      alreadyStored: z.boolean(),
    }),
  }),
  z.strictObject({
    kind: z.literal('block-restore'),
    manifestId: z.string(),
    snapshotId: z.string(),
    volumeId: z.string().optional(),
    kmsKeyArn: z.string().optional(),
    blocksWritten: z.number().int().nonnegative(),
    bytesWritten: z.number().nonnegative(),
  }),
  z.strictObject({
    kind: z.literal('file-backup'),
    manifestId: z.string(),
    stats: manifestStats,
    files: z.number().int().nonnegative(),
    directories: z.number().int().nonnegative(),
    symlinks: z.number().int().nonnegative(),
    hardLinks: z.number().int().nonnegative(),
    filesUnchanged: z.number().int().nonnegative(),
    chunks: z.number().int().nonnegative(),
    chunksDeduplicated: z.number().int().nonnegative(),
    /** Sockets, FIFOs, devices and vanished entries: the first ones, and how many in all. */
    skipped: z.array(z.strictObject({ path: z.string(), reason: z.string() })),
    skippedCount: z.number().int().nonnegative(),
    alreadyStored: z.boolean(),
  }),
  z.strictObject({
    kind: z.literal('file-restore'),
    manifestId: z.string(),
    files: z.number().int().nonnegative(),
    directories: z.number().int().nonnegative(),
    symlinks: z.number().int().nonnegative(),
    hardLinks: z.number().int().nonnegative(),
    bytesWritten: z.number().nonnegative(),
  }),
  z.strictObject({
    kind: z.literal('verify'),
    blobsChecked: z.number().int().nonnegative(),
    bytesChecked: z.number().nonnegative(),
    /** The first problems (each names its blob or pack), and how many in all. */
    problems: z.array(z.string()),
    problemCount: z.number().int().nonnegative(),
  }),
  z.strictObject({
    kind: z.literal('gc'),
    liveManifests: z.number().int().nonnegative(),
    packsKept: z.number().int().nonnegative(),
    packsDeleted: z.number().int().nonnegative(),
    bytesFreed: z.number().nonnegative(),
    packsRepacked: z.number().int().nonnegative(),
    blobsCopied: z.number().int().nonnegative(),
    bytesCopied: z.number().nonnegative(),
    /** The first packs left whole because a live blob failed its check, and how many in all. */
    problems: z.array(z.string()),
    problemCount: z.number().int().nonnegative(),
  }),
]);
export type DataMoverResult = z.infer<typeof dataMoverResult>;

export const DATA_MOVER_STATES = ['Running', 'Completed', 'Failed', 'Cancelled'] as const;

/**
 * The progress document, rewritten every `progressIntervalMs` while the job runs and once at its
 * end: what the state machine (or a poller) reads. A crashed run leaves `Running` with a stale
 * `updatedAt`; a re-run of the job takes it over (`attempt` + 1).
 */
export const dataMoverProgress = z.strictObject({
  jobId: z.string(),
  kind: z.enum(DATA_MOVER_KINDS),
  state: z.enum(DATA_MOVER_STATES),
  /** `opening` the repository, `moving` data, `finishing` (flush, manifest), `done`. */
  phase: z.enum(['opening', 'moving', 'finishing', 'done']),
  attempt: z.number().int().positive(),
  startedAt: z.string(),
  updatedAt: z.string(),
  bytesDone: z.number().nonnegative(),
  /** Grows while a listing is read; final once `totalKnown`. */
  bytesTotal: z.number().nonnegative(),
  totalKnown: z.boolean(),
  blocksDone: z.number().int().nonnegative().optional(),
  blocksTotal: z.number().int().nonnegative().optional(),
  filesDone: z.number().int().nonnegative().optional(),
  filesTotal: z.number().int().nonnegative().optional(),
  result: dataMoverResult.optional(),
  error: z.strictObject({ name: z.string(), message: z.string(), retryable: z.boolean() }).optional(),
});
export type DataMoverProgress = z.infer<typeof dataMoverProgress>;

const writeStats = z.strictObject({
  blobsStored: z.number().int().nonnegative(),
  blobsDeduplicated: z.number().int().nonnegative(),
  rawBytes: z.number().nonnegative(),
  storedBytes: z.number().nonnegative(),
  packsWritten: z.number().int().nonnegative(),
});

/** block-backup's checkpoint (BlockBackupCheckpoint), as kept between runs of one job. */
export const blockBackupCheckpoint = z.strictObject({
  snapshotId: z.string(),
  parentManifestId: z.string().optional(),
  nextRange: z.number().int().nonnegative(),
  chunks: z.array(z.string().regex(/^[0-9a-f]{64}$/)),
  totalBytes: z.number().nonnegative(),
  blocksRead: z.number().int().nonnegative(),
  bytesRead: z.number().nonnegative(),
  writes: writeStats,
});

/** The cancel marker: its presence cancels the job (this run and any later run of it). */
export const dataMoverCancel = z.strictObject({
  requestedAt: z.string(),
  reason: z.string().max(1024).optional(),
});
export type DataMoverCancel = z.infer<typeof dataMoverCancel>;
