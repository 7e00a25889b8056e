/**
 * The data mover under `lifeboat --local`: the values of the state machines' `${DataMover…}`
 * placeholders, their `ecs:runTask.sync` states run as child processes (failing as Step Functions
 * reports a stopped task, so Retry and Catch apply as deployed), and the repository: in the
 * backup directory itself (`plugins/lifeboat/repository/`, as in a bucket), its data key wrapped
 * by a local key file kept outside it (`--repository-key-file`, else
 * $LIFEBOAT_REPOSITORY_KEY_FILE, else ~/.config/lifeboat/repository.key, created with the
 * repository, never inside the backup directory).
 * Also the repository's garbage collection, as the data mover's `gc` job.
 */
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonValue } from '../../shared/adapters/local-state-machine.js';
import type { RepositoryLocation } from '../../shared/contracts/data-mover-job.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { GcReport } from '../../shared/ports/repository.js';
import { runDataMoverProcess, runDataMoverTask } from './data-mover-process.js';

/** What the local runtimes need to run the data mover. */
export interface LocalDataMover {
  /** The repository the jobs name: a directory (or a bucket) and the key wrapping its data key. */
  readonly repository: RepositoryLocation;
  /** The region of the EBS snapshots and volumes (default: the process's AWS_REGION). */
  readonly region?: string;
  /** Added to the child process's environment (AWS endpoint and credentials, …). */
  readonly environment?: Readonly<Record<string, string>>;
}

/** Local stand-ins for the data mover task's placeholders. */
export const LOCAL_DATA_MOVER_TASK: Readonly<Record<string, string>> = {
  DataMoverClusterArn: 'arn:aws:ecs:local:000000000000:cluster/lifeboat-local',
  DataMoverTaskDefinitionArn: 'arn:aws:ecs:local:000000000000:task-definition/lifeboat-data-mover:1',
  DataMoverSubnetIds: 'subnet-local',
  DataMoverSecurityGroupId: 'sg-local',
  DataMoverAssignPublicIp: 'DISABLED',
};

/**
 * `ecs:runTask.sync` of the data mover: the RunTask request's job run as a child process. A job
 * that did not complete fails as Step Functions reports a stopped task (States.TaskFailed).
 */
export async function runLocalDataMoverTask(
  input: JsonValue,
  environment: Readonly<Record<string, string>> | undefined,
): Promise<JsonValue> {
  try {
    return (await runDataMoverTask(input, environment ? { environment } : {})) as unknown as JsonValue;
  } catch (error) {
    const failed = new Error(error instanceof Error ? error.message : String(error));
    failed.name = 'States.TaskFailed';
    throw failed;
  }
}

export function repositoryKeyFile(flag: string | undefined): string {
  return resolve(
    flag ??
      process.env.LIFEBOAT_REPOSITORY_KEY_FILE ??
      join(homedir(), '.config', 'lifeboat', 'repository.key'),
  );
}

/** The repository of a local directory store. */
export function localRepository(store: ObjectStore, keyFile: string): RepositoryLocation {
  if (!store.location.startsWith('file://'))
    throw new LifeboatError(`the local data mover needs a directory store, not ${store.location}`);
  const directory = fileURLToPath(store.location);
  const fromStore = relative(resolve(directory), resolve(keyFile));
  if (fromStore === '' || (fromStore !== '..' && !fromStore.startsWith(`..${sep}`) && !isAbsolute(fromStore)))
    throw new LifeboatError(
      `--repository-key-file ${keyFile} is inside the backup directory ${directory}: keep the key apart from the data it protects`,
    );
  return { directory, keyFile };
}

/** Runs the repository's garbage collection as the data mover's `gc` job; its report. */
export async function collectGarbage(options: {
  repository: RepositoryLocation;
  /** See the `gc` job's `repackDeadFraction`. */
  repackDeadFraction?: number;
  environment?: Readonly<Record<string, string>>;
}): Promise<GcReport> {
  const progress = await runDataMoverProcess({
    job: {
      kind: 'gc',
      jobId: `gc-${randomUUID()}`,
      repository: options.repository,
      ...(options.repackDeadFraction !== undefined ? { repackDeadFraction: options.repackDeadFraction } : {}),
    },
    ...(options.environment ? { environment: options.environment } : {}),
  });
  const result = progress.result;
  if (result?.kind !== 'gc') throw new LifeboatError('the data mover reported no garbage collection');
  return {
    liveManifests: result.liveManifests,
    packsKept: result.packsKept,
    packsDeleted: result.packsDeleted,
    bytesFreed: result.bytesFreed,
    packsRepacked: result.packsRepacked,
    blobsCopied: result.blobsCopied,
    bytesCopied: result.bytesCopied,
    problems: result.problems,
  };
}
