/**
 * PatchProvisionedVolumes' file restores (Velero's pod volume restore): for a volume whose files
 * the data mover backed up (fs-backup), a file-restore job into the new volume's directory once
 * its PVC is bound, kept in the step's progress until the state machine reports the job ran; then
 * how it ended, from the job's final document. Only where the data mover can reach that directory
 * (a local or hostPath PV under `lifeboat --local`); never a job it could not run.
 */
import { type DataMoverJob, dataMoverProgress } from '../../shared/contracts/data-mover-job.js';
import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import type { ProvisionedProgress } from '../../shared/contracts/restore-volumes.js';
import { dataMoverWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { FileAccess } from '../backup-item-block/volumes.js';
import { type RestoreDataMover, restoreJobId } from '../restore-volumes/moved-volumes.js';

type Json = Record<string, unknown>;
const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};

/** What the file restores of one call work with. */
export interface FileRestoreOptions {
  readonly run: RestoreRun;
  readonly progress: ProvisionedProgress;
  readonly store: ObjectStore;
  /** The data mover's repository; unset, such volumes stay empty, warned. */
  readonly dataMover?: RestoreDataMover;
  readonly fileAccess?: FileAccess;
  /** The jobs the last RestoreFileData ran. */
  readonly moved?: readonly { jobId: string; error?: string }[];
  /** A line of the restore log about the PVC `namespace/name`. */
  readonly note: (key: string, level: LogEvent['level'], msg: string) => void;
}

/** A volume whose PVC is bound, with the PV it got and the manifest of its files. */
export interface BoundFiles {
  readonly volume: { pvcNamespace: string; pvcName: string };
  readonly pv: Json;
  readonly manifestId: string;
}

/**
 * The file restores of one call: `settle` records the jobs the last RestoreFileData ran, `start`
 * makes the job of a volume whose PVC is bound (or says why it cannot), `ready` lists the jobs
 * to run now.
 */
export interface FileRestores {
  readonly settle: () => Promise<void>;
  readonly start: (bound: BoundFiles) => void;
  readonly ready: () => DataMoverJob[];
}

type FileMoves = NonNullable<ProvisionedProgress['files']>;

export function fileRestores(options: FileRestoreOptions): FileRestores {
  options.progress.files ??= {};
  const jobs = options.progress.files;
  return {
    settle: () => settleFileRestores(options, jobs),
    start: (bound) => startFileRestore(options, { jobs, ...bound }),
    ready: () =>
      Object.values(jobs)
        .filter((m) => m.state === 'Ready' && m.job)
        .map((m) => m.job as DataMoverJob),
  };
}

/** Records how each job the last RestoreFileData ran ended, from its final document. */
async function settleFileRestores(options: FileRestoreOptions, jobs: FileMoves): Promise<void> {
  const { note } = options;
  const ran = new Map((options.moved ?? []).map((m) => [m.jobId, m]));
  for (const [key, move] of Object.entries(jobs)) {
    const report = ran.get(move.jobId);
    if (move.state !== 'Ready' || !report) continue;
    delete move.job;
    const raw = await options.store.get(dataMoverWorkKeys(move.jobId).progress);
    const parsed = raw
      ? dataMoverProgress.safeParse(JSON.parse(Buffer.from(raw).toString('utf8')))
      : undefined;
    const doc = parsed?.success ? parsed.data : undefined;
    const result = doc?.state === 'Completed' ? doc.result : undefined;
    if (result?.kind === 'file-restore') {
      move.state = 'Completed';
      note(
        key,
        'info',
        `Restored ${result.files} files, ${result.directories} directories and ${result.symlinks} symlinks (${result.bytesWritten} bytes) from the repository into the volume`,
      );
      continue;
    }
    move.state = 'Failed';
    note(
      key,
      'error',
      `Could not restore the volume's files from the repository: ${doc?.error?.message ?? (report.error ? `the data mover task failed (${report.error})` : 'the data mover stopped without recording a result')}`,
    );
  }
}

/** Makes the file-restore job of a bound volume once, or warns why its files cannot come back. */
function startFileRestore(options: FileRestoreOptions, bound: BoundFiles & { jobs: FileMoves }): void {
  const { run, note, dataMover } = options;
  const { volume, pv, manifestId, jobs } = bound;
  const key = `${volume.pvcNamespace}/${volume.pvcName}`;
  if (jobs[key]) return;
  const spec = record(pv.spec);
  const path = String(record(spec.local).path ?? record(spec.hostPath).path ?? '');
  const reason = !dataMover
    ? 'this restore has no data mover (the repository key is not configured)'
    : options.fileAccess !== 'local-paths'
      ? 'no data mover of this restore can reach the new volume (a Fargate task mounts no pod volume; lifeboat --local restores into local and hostPath PVs)'
      : !path.startsWith('/')
        ? `the new volume is not a local or hostPath PV the data mover can write on this machine`
        : undefined;
  if (reason || !dataMover) {
    note(
      key,
      'warning',
      `Its files (manifest ${manifestId}) are not restored, the volume stays empty: ${reason}`,
    );
    return;
  }
  const jobId = restoreJobId(run, `files/${key}`);
  jobs[key] = {
    jobId,
    state: 'Ready',
    job: {
      kind: 'file-restore',
      jobId,
      repository: dataMover.repository,
      ...(dataMover.work ? { work: dataMover.work } : {}),
      manifestId,
      tags: { restore: run.name, pvcNamespace: volume.pvcNamespace, pvcName: volume.pvcName },
      target: { path },
    },
  };
  note(key, 'info', `Restoring its files from the repository (manifest ${manifestId}) into ${path}`);
}
