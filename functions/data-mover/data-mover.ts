/**
 * The data mover's use case: runs one job (shared/contracts/data-mover-job) with the movers of
 * block and file mode or the repository's maintenance, keeping its progress document current,
 * and ends it Completed (with the result the backup records), Failed, or Cancelled.
 *
 * Re-runs of a job (same job id) are safe: a Completed job returns its recorded result without
 * touching anything; a backup whose manifest exists reports it (never a second manifest); an
 * interrupted block backup continues from its checkpoint and every run deduplicates against the
 * blobs earlier runs stored; a block restore writes into the same snapshot (its client token is
 * the job's). Cancellation (`signal`, or the job's cancel marker) aborts every call in flight;
 * nothing half-written is flushed and no manifest is written.
 */
import { createHash } from 'node:crypto';
import type { RepositoryParameters } from '../../shared/adapters/repository/open-repository.js';
import type {
  DataMoverJob,
  DataMoverJobOf,
  DataMoverProgress,
  DataMoverResult,
} from '../../shared/contracts/data-mover-job.js';
import {
  DataMoverCancelled,
  LifeboatError,
  SnapshotManifestMissing,
  ValidationFailed,
} from '../../shared/domain/errors.js';
import type { Tag } from '../../shared/domain/volumes/ebs-volume.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Repository, SnapshotManifest } from '../../shared/ports/repository.js';
import type { SnapshotBlocks } from '../../shared/ports/snapshot-blocks.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { backupFileTree, chunkingOf } from './file-backup.js';
import { restoreFileTree } from './file-restore.js';
import type { JobWork } from './job-work.js';
import { ProgressReporter } from './progress-reporter.js';

/** The repository as opened for a job; `fileChunking` is what file mode cuts with. */
export type JobRepository = Repository & { readonly parameters: Pick<RepositoryParameters, 'fileChunking'> };

export interface DataMoverDeps {
  /** Opens the job's repository; `create` on the first backup into it. */
  openRepository(options: { create: boolean; signal: AbortSignal }): Promise<JobRepository>;
  readonly work: JobWork;
  /** The EBS direct APIs where the source snapshot is (block backup). */
  readonly sourceBlocks?: () => SnapshotBlocks;
  /** The EBS direct APIs and EC2 of the restore's target account and region (block restore). */
  readonly targetBlocks?: () => SnapshotBlocks;
  readonly targetSnapshotter?: () => Snapshotter;
  readonly clock: Clock;
  /** Aborted when the task is stopped (SIGTERM), with a DataMoverCancelled reason. */
  readonly signal?: AbortSignal;
}

const DEFAULT_PROGRESS_MS = 2000;
/** Results keep lists short: the progress document is read by the state machine. */
const LISTED = 20;

/** Velero's tags for what the data mover writes (`velero.io/backup`, `velero.io/restore`, …). */
export function veleroTags(tags: DataMoverJob['tags']): Record<string, string> {
  const out: Record<string, string> = {};
  if (tags?.backup) out['velero.io/backup'] = tags.backup;
  if (tags?.restore) out['velero.io/restore'] = tags.restore;
  if (tags?.pvcNamespace) out['velero.io/pvc-namespace'] = tags.pvcNamespace;
  if (tags?.pvcName) out['velero.io/pvc-name'] = tags.pvcName;
  return out;
}

/** StartSnapshot's and CreateVolume's idempotency token: one per job, ≤ 64 characters. */
export function clientTokenOf(jobId: string): string {
  return `lb-${createHash('sha256').update(`data-mover:${jobId}`).digest('hex').slice(0, 40)}`;
}

function errorOf(error: unknown): NonNullable<DataMoverProgress['error']> {
  const e = error instanceof Error ? error : new Error(String(error));
  return { name: e.name, message: e.message, retryable: e instanceof LifeboatError && e.retryable };
}

function need<T>(make: (() => T) | undefined, what: string): T {
  if (!make) throw new LifeboatError(`the data mover was started without ${what}`);
  return make();
}

/** The manifest a backup job writes, when an earlier run already wrote it. */
async function storedManifest(
  repository: Repository,
  id: string,
  signal: AbortSignal,
): Promise<SnapshotManifest | undefined> {
  try {
    return await repository.readManifest(id, { signal });
  } catch (error) {
    if (error instanceof SnapshotManifestMissing) return undefined;
    throw error;
  }
}

function otherSnapshot(manifest: SnapshotManifest): ValidationFailed {
  return new ValidationFailed([
    { path: 'manifestId', message: `manifest ${manifest.id} exists and holds another snapshot` },
  ]);
}

type Run = {
  repository: JobRepository;
  reporter: ProgressReporter;
  signal: AbortSignal;
  deps: DataMoverDeps;
};

function blockBackupResult(
  manifest: SnapshotManifest & { kind: 'block' },
  run: Extract<DataMoverResult, { kind: 'block-backup' }>['run'],
): DataMoverResult {
  return {
    kind: 'block-backup',
    manifestId: manifest.id,
    snapshotId: manifest.source.snapshotId,
    incremental: manifest.parent !== undefined,
    volumeSizeBytes: manifest.volumeSizeBytes,
    stats: manifest.stats,
    run,
  };
}

async function blockBackup(job: DataMoverJobOf<'block-backup'>, run: Run): Promise<DataMoverResult> {
  const { repository, reporter, signal } = run;
  const manifestId = job.manifestId ?? job.jobId;
  const existing = await storedManifest(repository, manifestId, signal);
  if (existing) {
    // An earlier run wrote the manifest and stopped before recording its result.
    if (existing.kind !== 'block' || existing.source.snapshotId !== job.source.snapshotId)
      throw otherSnapshot(existing);
    const total = existing.stats.totalBytes;
    reporter.update({ bytesDone: total, bytesTotal: total, totalKnown: true });
    return blockBackupResult(existing, {
      blocksRead: 0,
      bytesRead: 0,
      resumedAtBlock: 0,
      alreadyStored: true,
    });
  }
  // Block mode's code is loaded by block jobs only: a file job's start-up never compiles it.
  const { backupBlocks } = await import('./block-backup.js');
  const backup = await backupBlocks({
    blocks: need(run.deps.sourceBlocks, 'the EBS direct APIs of the source'),
    repository,
    snapshotId: job.source.snapshotId,
    manifestId,
    tags: veleroTags(job.tags),
    source: {
      ...(job.source.volumeId ? { volumeId: job.source.volumeId } : {}),
      ...(job.source.region ? { region: job.source.region } : {}),
      ...(job.source.accountId ? { accountId: job.source.accountId } : {}),
    },
    ...(job.source.parentManifestId ? { parentManifestId: job.source.parentManifestId } : {}),
    ...(job.concurrency ? { concurrency: job.concurrency } : {}),
    checkpoints: run.deps.work.checkpoints,
    ...(job.checkpointIntervalMs !== undefined ? { checkpointEveryMs: job.checkpointIntervalMs } : {}),
    onProgress: (p) => {
      reporter.update(p);
      if (p.totalKnown && p.blocksDone === p.blocksTotal) reporter.enter('finishing');
    },
    now: () => run.deps.clock.now(),
    signal,
  });
  const { blocksRead, bytesRead, resumedAtBlock } = backup.run;
  return blockBackupResult(backup.manifest, { blocksRead, bytesRead, resumedAtBlock, alreadyStored: false });
}

async function blockRestore(job: DataMoverJobOf<'block-restore'>, run: Run): Promise<DataMoverResult> {
  const token = clientTokenOf(job.jobId);
  const tags = veleroTags(job.tags);
  const { target } = job;
  const { restoreBlocks } = await import('./block-restore.js');
  const result = await restoreBlocks({
    repository: run.repository,
    manifestId: job.manifestId,
    target: need(run.deps.targetBlocks, 'the EBS direct APIs of the target'),
    ...(run.deps.targetSnapshotter ? { targetSnapshotter: run.deps.targetSnapshotter() } : {}),
    clientToken: token,
    ...(target.kmsKeyArn ? { kmsKeyArn: target.kmsKeyArn } : {}),
    ...(target.encrypted ? { encrypted: true } : {}),
    tags,
    ...(target.description ? { description: target.description } : {}),
    ...(target.volume
      ? {
          volume: {
            ...target.volume,
            tags: Object.entries(tags).map(([key, value]): Tag => ({ key, value })),
            clientToken: `${token}-volume`,
          },
        }
      : {}),
    ...(job.concurrency ? { concurrency: job.concurrency } : {}),
    onProgress: (p) => run.reporter.update(p),
    signal: run.signal,
  });
  return {
    kind: 'block-restore',
    manifestId: job.manifestId,
    snapshotId: result.snapshotId,
    ...(result.volumeId ? { volumeId: result.volumeId } : {}),
    ...(result.kmsKeyArn ? { kmsKeyArn: result.kmsKeyArn } : {}),
    blocksWritten: result.blocksWritten,
    bytesWritten: result.bytesWritten,
  };
}

async function fileBackup(job: DataMoverJobOf<'file-backup'>, run: Run): Promise<DataMoverResult> {
  const { repository, signal } = run;
  const manifestId = job.manifestId ?? job.jobId;
  const existing = await storedManifest(repository, manifestId, signal);
  if (existing && existing.kind !== 'file') throw otherSnapshot(existing);
  const result = existing
    ? undefined
    : await backupFileTree({
        repository,
        clock: run.deps.clock,
        root: job.source.path,
        manifestId,
        tags: veleroTags(job.tags),
        ...(job.source.parentManifestId ? { parent: job.source.parentManifestId } : {}),
        chunking: chunkingOf(repository.parameters.fileChunking),
        onProgress: (p) => run.reporter.update(p),
        signal,
      });
  const manifest = result?.manifest ?? (existing as SnapshotManifest);
  return {
    kind: 'file-backup',
    manifestId: manifest.id,
    stats: manifest.stats,
    files: result?.files ?? 0,
    directories: result?.directories ?? 0,
    symlinks: result?.symlinks ?? 0,
    hardLinks: result?.hardLinks ?? 0,
    filesUnchanged: result?.filesUnchanged ?? 0,
    chunks: result?.chunks ?? 0,
    chunksDeduplicated: result?.chunksDeduplicated ?? 0,
    skipped: (result?.skipped ?? []).slice(0, LISTED).map((s) => ({ path: s.path, reason: s.reason })),
    skippedCount: result?.skipped.length ?? 0,
    alreadyStored: result === undefined,
  };
}

async function fileRestore(job: DataMoverJobOf<'file-restore'>, run: Run): Promise<DataMoverResult> {
  const result = await restoreFileTree({
    repository: run.repository,
    manifestId: job.manifestId,
    target: job.target.path,
    ...(job.target.ownership !== undefined ? { ownership: job.target.ownership } : {}),
    ...(job.concurrency ? { concurrency: job.concurrency } : {}),
    onProgress: (p) => run.reporter.update({ ...p, totalKnown: true }),
    signal: run.signal,
  });
  return {
    kind: 'file-restore',
    manifestId: job.manifestId,
    files: result.files,
    directories: result.directories,
    symlinks: result.symlinks,
    hardLinks: result.hardLinks,
    bytesWritten: result.bytesWritten,
  };
}

async function perform(job: DataMoverJob, run: Run): Promise<DataMoverResult> {
  const { repository } = run;
  run.reporter.enter('moving');
  switch (job.kind) {
    case 'block-backup':
      return blockBackup(job, run);
    case 'block-restore':
      return blockRestore(job, run);
    case 'file-backup':
      return fileBackup(job, run);
    case 'file-restore':
      return fileRestore(job, run);
    case 'verify': {
      const report = await repository.verify({ signal: run.signal });
      return {
        kind: 'verify',
        blobsChecked: report.blobsChecked,
        bytesChecked: report.bytesChecked,
        problems: report.problems.slice(0, LISTED),
        problemCount: report.problems.length,
      };
    }
    case 'gc': {
      const report = await repository.collectGarbage({
        signal: run.signal,
        ...(job.repackDeadFraction !== undefined ? { repackDeadFraction: job.repackDeadFraction } : {}),
      });
      return {
        kind: 'gc',
        liveManifests: report.liveManifests,
        packsKept: report.packsKept,
        packsDeleted: report.packsDeleted,
        bytesFreed: report.bytesFreed,
        packsRepacked: report.packsRepacked,
        blobsCopied: report.blobsCopied,
        bytesCopied: report.bytesCopied,
        problems: report.problems.slice(0, LISTED),
        problemCount: report.problems.length,
      };
    }
  }
}

/**
 * Writes the first progress document while the repository opens (unless the job is cancelled
 * already); both settle before either's failure is thrown, so nothing is left running.
 */
async function startedWithOpen(options: {
  job: DataMoverJob;
  deps: DataMoverDeps;
  reporter: ProgressReporter;
  signal: AbortSignal;
}): Promise<JobRepository> {
  const { job, deps, signal } = options;
  const create = job.kind === 'block-backup' || job.kind === 'file-backup';
  const [started, opened] = await Promise.allSettled([
    options.reporter.start(),
    signal.aborted ? Promise.reject(signal.reason) : deps.openRepository({ create, signal }),
  ]);
  if (started.status === 'rejected') throw started.reason;
  signal.throwIfAborted();
  if (opened.status === 'rejected') throw opened.reason;
  return opened.value;
}

/**
 * Runs the job to its end and returns its final progress document (state Completed); throws
 * DataMoverCancelled when cancelled, or the failure, after recording either in the document.
 */
export async function runDataMoverJob(job: DataMoverJob, deps: DataMoverDeps): Promise<DataMoverProgress> {
  // Asked together: a run's fixed cost is mostly such round trips.
  const cancelling = deps.work.cancelRequested(deps.signal);
  cancelling.catch(() => undefined); // awaited below, unless the job was already done
  const previous = await deps.work.readProgress(deps.signal);
  const repeatable = job.kind === 'verify' || job.kind === 'gc';
  if (!repeatable && previous?.state === 'Completed' && previous.result) return previous;

  const controller = new AbortController();
  const cancel = (reason: string): void => {
    if (!controller.signal.aborted) controller.abort(new DataMoverCancelled(reason));
  };
  const onStop = (): void => {
    const reason = deps.signal?.reason;
    cancel(reason instanceof DataMoverCancelled ? reason.reason : 'the task was stopped');
  };
  if (deps.signal?.aborted) onStop();
  deps.signal?.addEventListener('abort', onStop, { once: true });
  const reporter = new ProgressReporter({
    work: deps.work,
    clock: deps.clock,
    jobId: job.jobId,
    kind: job.kind,
    attempt: (previous?.attempt ?? 0) + 1,
    intervalMs: job.progressIntervalMs ?? DEFAULT_PROGRESS_MS,
    onCancel: (marker) =>
      cancel(`cancel requested at ${marker.requestedAt}${marker.reason ? `: ${marker.reason}` : ''}`),
  });
  try {
    const marker = await cancelling;
    if (marker)
      cancel(`cancel requested at ${marker.requestedAt}${marker.reason ? `: ${marker.reason}` : ''}`);
    // The first progress document and the repository's opening are independent: both at once.
    const repository = await startedWithOpen({ job, deps, reporter, signal: controller.signal });
    const result = await perform(job, { repository, reporter, signal: controller.signal, deps });
    return await reporter.finish({ state: 'Completed', result });
  } catch (error) {
    const cancelled = controller.signal.reason;
    const failure = cancelled instanceof DataMoverCancelled ? cancelled : error;
    await reporter
      .finish({
        state: cancelled instanceof DataMoverCancelled ? 'Cancelled' : 'Failed',
        error: errorOf(failure),
      })
      .catch(() => undefined);
    throw failure;
  } finally {
    deps.signal?.removeEventListener('abort', onStop);
  }
}
