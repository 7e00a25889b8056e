/**
 * Block-mode jobs for the data mover benchmark, run as the Fargate task runs them: the data
 * mover's entry compiled as the image compiles it (peer-runs.ts: lifeboatBundle), one process per
 * job, under /usr/bin/time for its CPU seconds and peak RSS. The job's result comes from the
 * progress document it prints. The benchmark's own process holds the volume image (for the raw
 * PUT baseline): measured apart, the data mover's peak RSS is its own.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DataMoverResult, dataMoverProgress } from '../../shared/contracts/data-mover-job.js';
import { CREDENTIALS, type Measured, timedWithOutput } from './peer-runs.js';

type ResultOf<K extends DataMoverResult['kind']> = Extract<DataMoverResult, { kind: K }>;

export interface BlockJobs {
  backup(options: {
    manifestId: string;
    snapshotId: string;
    parentManifestId?: string;
  }): Promise<{ measured: Measured; result: ResultOf<'block-backup'> }>;
  restore(options: {
    manifestId: string;
    jobId: string;
  }): Promise<{ measured: Measured; result: ResultOf<'block-restore'> }>;
}

/** Runs block jobs with `main` (a compiled entry) against a repository in `bucket` on `endpoint`. */
export function blockJobs(options: {
  main: string;
  endpoint: string;
  region: string;
  bucket: string;
  work: string;
  /** EBS calls in flight (the job's `concurrency`). */
  concurrency: number;
}): BlockJobs {
  const { main, endpoint, region, bucket, work, concurrency } = options;
  const env = {
    ...CREDENTIALS,
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: region,
    LIFEBOAT_S3_FORCE_PATH_STYLE: 'true',
  };
  const repository = { bucket, region, keyFile: join(work, 'block-bench.key') };
  const run = async <K extends DataMoverResult['kind']>(
    kind: K,
    job: { jobId: string } & Record<string, unknown>,
  ): Promise<{ measured: Measured; result: ResultOf<K> }> => {
    const file = join(work, `${job.jobId}.json`);
    await writeFile(file, JSON.stringify({ kind, repository, concurrency, ...job }));
    const { measured, stdout } = await timedWithOutput(
      'node',
      ['--enable-source-maps', main, 'run', '--job-file', file],
      env,
    );
    const progress = dataMoverProgress.parse(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}'));
    if (progress.result?.kind !== kind)
      throw new Error(`job ${job.jobId} ended ${progress.state} without a ${kind} result`);
    return { measured, result: progress.result as ResultOf<K> };
  };
  return {
    backup: ({ manifestId, snapshotId, parentManifestId }) =>
      run('block-backup', {
        jobId: manifestId,
        manifestId,
        source: { snapshotId, ...(parentManifestId ? { parentManifestId } : {}) },
      }),
    restore: ({ manifestId, jobId }) =>
      run('block-restore', { jobId, manifestId, tags: { restore: jobId }, target: {} }),
  };
}
