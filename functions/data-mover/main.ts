/**
 * The data mover's container entry (image: functions/common/fargate-task.Dockerfile): the Fargate task the backup
 * and restore state machines start with `ecs:runTask.sync`, and, under `lifeboat --local`, a
 * child process started the same way (cli/local/data-mover-process.ts). See docs/data-mover.md.
 *
 *   main                          the job in $LIFEBOAT_DATA_MOVER_JOB (JSON)
 *   main run --job-file FILE      the job in FILE
 *   main verify|gc REPOSITORY     by hand: --bucket B [--prefix P] [--region R] | --directory D,
 *                                 and --kms-key K | --key-file F; gc [--repack-dead-fraction F]
 *
 * Prints the job's final progress document (one JSON line) on stdout; the reason of a failure on
 * stderr. SIGTERM or SIGINT (ECS StopTask) cancels the job. Exit codes:
 *   0 completed (verify: every blob checked out)   1 failed (the document says why)
 *   2 invalid job or usage (each field named)      3 cancelled   4 verify found problems
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { readOnlyLocation } from '../../shared/adapters/backup-location-store.js';
import { objectStoreAt, repositoryKeyWrapper } from '../../shared/adapters/data-mover-adapters.js';
import { openRepository } from '../../shared/adapters/repository/open-repository.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import {
  DATA_MOVER_JOB_VARIABLE,
  type DataMoverJob,
  dataMoverJob,
  DATA_MOVER_EXIT as EXIT,
  parseDataMoverJob,
} from '../../shared/contracts/data-mover-job.js';
import { problemsOf } from '../../shared/contracts/kubernetes.js';
import { DataMoverCancelled, ValidationFailed } from '../../shared/domain/errors.js';
import { fileTreeChildren } from '../../shared/domain/files/tree.js';
import { repositoryKeys } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { type DataMoverDeps, runDataMoverJob } from './data-mover.js';
import { fileChunkingRecord } from './file-backup.js';
import { detachedJobWork, storedJobWork } from './job-work.js';

const moverEnv = z.object({
  [DATA_MOVER_JOB_VARIABLE]: z.string().optional(),
  AWS_REGION: z.string().min(1).optional(),
  LIFEBOAT_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
});
type MoverEnv = z.infer<typeof moverEnv>;

const invalid = (path: string, message: string): ValidationFailed =>
  new ValidationFailed([{ path, message }]);

/** The job and whether it keeps working data (a job of the state machines) or not (by hand). */
async function jobOf(
  argv: readonly string[],
  env: MoverEnv,
): Promise<{ job: DataMoverJob; detached: boolean }> {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      'job-file': { type: 'string' },
      bucket: { type: 'string' },
      prefix: { type: 'string' },
      region: { type: 'string' },
      directory: { type: 'string' },
      'kms-key': { type: 'string' },
      'key-file': { type: 'string' },
      'repack-dead-fraction': { type: 'string' },
    },
  });
  const command = positionals[0] ?? 'run';
  if (command === 'verify' || command === 'gc') {
    const repository = Object.fromEntries(
      Object.entries({
        bucket: values.bucket,
        prefix: values.prefix,
        region: values.region,
        directory: values.directory,
        kmsKeyId: values['kms-key'],
        keyFile: values['key-file'],
      }).filter(([, v]) => v !== undefined),
    );
    const repack = values['repack-dead-fraction'];
    const parsed = dataMoverJob.safeParse({
      kind: command,
      jobId: `${command}-by-hand`,
      repository,
      ...(repack !== undefined ? { repackDeadFraction: Number(repack) } : {}),
    });
    if (!parsed.success) throw new ValidationFailed(problemsOf(parsed.error));
    return { job: parsed.data, detached: true };
  }
  if (command !== 'run' || positionals.length > 1)
    throw invalid('(command)', `unknown command "${positionals.join(' ')}": run, verify or gc`);
  const file = values['job-file'];
  const text = file ? await readFile(file, 'utf8') : env[DATA_MOVER_JOB_VARIABLE];
  if (text === undefined) throw invalid('(job)', `set ${DATA_MOVER_JOB_VARIABLE} or give --job-file`);
  const parsed = parseDataMoverJob(text);
  if (!parsed.ok) throw new ValidationFailed(parsed.problems);
  return { job: parsed.job, detached: false };
}

/** Opens the job's repository in `store`; a key is made up only with the repository itself. */
function repositoryOpener(options: {
  store: ObjectStore;
  location: DataMoverJob['repository'];
  region: string | undefined;
}): DataMoverDeps['openRepository'] {
  const { store, location, region } = options;
  return async ({ create, signal }) =>
    openRepository({
      store,
      keys: await repositoryKeyWrapper(
        location.keyFile
          ? { keyFile: location.keyFile }
          : { kmsKeyId: location.kmsKeyId ?? '', region: region ?? '' },
        // A key is made up only with the repository: an existing one needs its own key. Asked
        // only when a key file is missing (a KMS key, or a key file present, needs no request).
        {
          create: async () =>
            create === true && !(await store.exists(repositoryKeys.format, signal ? { signal } : {})),
        },
      ),
      ...(create ? { create: { fileChunking: fileChunkingRecord } } : {}),
      fileTreeReferences: fileTreeChildren,
      signal,
    });
}

/**
 * The repository's store and the working data's: one store, unless the job names `work`; then
 * the repository is only read (a DR deployment's source, which it may not write).
 */
function jobStores(options: { job: DataMoverJob; region: string | undefined; env: MoverEnv }): {
  store: ObjectStore;
  workStore: ObjectStore;
} {
  const { job, env } = options;
  const forcePathStyle = env.LIFEBOAT_S3_FORCE_PATH_STYLE === 'true';
  const at = (l: { bucket?: string; prefix?: string; directory?: string }, region: string | undefined) =>
    objectStoreAt(
      l.directory
        ? { directory: l.directory }
        : {
            bucket: l.bucket ?? '',
            ...(l.prefix ? { prefix: l.prefix } : {}),
            region: region ?? '',
            forcePathStyle,
          },
    );
  const store = at(job.repository, options.region);
  if (!job.work) return { store, workStore: store };
  const workRegion = job.work.region ?? env.AWS_REGION;
  if (job.work.bucket && !workRegion) throw invalid('work.region', 'give the region or set AWS_REGION');
  return {
    store: readOnlyLocation({ store, name: 'repository' }),
    workStore: at(job.work, workRegion),
  };
}

async function depsOf(options: {
  job: DataMoverJob;
  detached: boolean;
  env: MoverEnv;
  signal: AbortSignal;
}): Promise<DataMoverDeps> {
  const { job, env } = options;
  // Block jobs only: file jobs never load the EC2 and EBS clients (most of a start-up's time).
  const { ebsAccess } = job.kind.startsWith('block-')
    ? await import('../../shared/adapters/ebs-access.js')
    : { ebsAccess: undefined };
  const location = job.repository;
  const region = location.region ?? env.AWS_REGION;
  if (location.bucket && !region) throw invalid('repository.region', 'give the region or set AWS_REGION');
  const { store, workStore } = jobStores({ job, region, env });
  const ebsRegion = (given: string | undefined, path: string): string => {
    const r = given ?? env.AWS_REGION;
    if (!r) throw invalid(path, 'give the region or set AWS_REGION');
    return r;
  };
  const sockets = Math.max(64, (job.concurrency ?? 32) * 2);
  const target =
    job.kind === 'block-restore' && ebsAccess
      ? ebsAccess({
          region: ebsRegion(job.target.region, 'target.region'),
          ...(job.target.roleArn ? { roleArn: job.target.roleArn } : {}),
          ...(job.target.externalId ? { externalId: job.target.externalId } : {}),
          maxSockets: sockets,
        })
      : undefined;
  return {
    openRepository: repositoryOpener({ store, location, region }),
    work: options.detached ? detachedJobWork : storedJobWork({ store: workStore, jobId: job.jobId }),
    ...(job.kind === 'block-backup' && ebsAccess
      ? {
          sourceBlocks: () =>
            ebsAccess({ region: ebsRegion(job.source.region, 'source.region'), maxSockets: sockets }).blocks,
        }
      : {}),
    ...(target ? { targetBlocks: () => target.blocks, targetSnapshotter: () => target.snapshotter } : {}),
    clock: systemClock,
    signal: options.signal,
  };
}

export async function main(argv: readonly string[], source: NodeJS.ProcessEnv): Promise<number> {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void =>
    stop.abort(new DataMoverCancelled(`${signal} received (the task was stopped)`));
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    const env = moverEnv.parse(source);
    const { job, detached } = await jobOf(argv, env);
    const progress = await runDataMoverJob(job, await depsOf({ job, detached, env, signal: stop.signal }));
    process.stdout.write(`${JSON.stringify(progress)}\n`);
    if (progress.result?.kind === 'verify' && progress.result.problemCount > 0) {
      process.stderr.write(`verify found ${progress.result.problemCount} problem(s)\n`);
      return EXIT.verifyProblems;
    }
    if (progress.result?.kind === 'gc' && progress.result.problemCount > 0)
      process.stderr.write(
        `gc left ${progress.result.problemCount} pack(s) whole, a live blob failing its check (run verify): ${progress.result.problems.join('; ')}\n`,
      );
    return EXIT.completed;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`data mover: ${message}\n`);
    if (error instanceof ValidationFailed) return EXIT.invalid;
    if (error instanceof DataMoverCancelled) return EXIT.cancelled;
    return EXIT.failed;
  }
}

// Exits once done: an idle keep-alive connection or a lease timer must not keep a task running.
process.exit(await main(process.argv.slice(2), process.env));
