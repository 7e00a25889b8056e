/**
 * The data mover under `lifeboat --local`: its container entry (functions/data-mover/main.ts)
 * started as a child process with the environment a Fargate task would have, for the local
 * state machine interpreter's `ecs:runTask.sync` (the RunTask request's container override
 * carries the job) and for a person's `verify` or `gc`. The process can be stopped as ECS stops
 * a task (SIGTERM: the job ends Cancelled) or killed outright (SIGKILL: a crash; a re-run of the
 * job continues). Never changes the job it was given.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  DATA_MOVER_EXIT,
  DATA_MOVER_JOB_VARIABLE,
  type DataMoverProgress,
  dataMoverProgress,
} from '../../shared/contracts/data-mover-job.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { containerEnvironment } from './hook-runner-process.js';
import { runtimeFiles } from './runtime-files.js';

/** What is kept of the process's output: its final document and enough of a failure's reason. */
const MAX_OUTPUT_CHARS = 64 * 1024;

export interface DataMoverExit {
  /** The exit code (DATA_MOVER_EXIT), or null when a signal ended the process. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface DataMoverProcess {
  readonly pid: number | undefined;
  /** Sends a signal: SIGTERM as ECS StopTask does, SIGKILL for a crash. */
  kill(signal: NodeJS.Signals): boolean;
  readonly exited: Promise<DataMoverExit>;
}

/**
 * Starts the data mover: the job (JSON-encoded into its variable, unparsed here so a bad job
 * reaches the command's own validation) or a command line (`verify --directory …`).
 */
export function startDataMoverProcess(options: {
  job?: unknown;
  args?: readonly string[];
  /** Added to this process's environment (AWS_REGION, AWS_ENDPOINT_URL, credentials, …). */
  environment?: Readonly<Record<string, string>>;
}): DataMoverProcess {
  const child: ChildProcess = spawn(
    process.execPath,
    [...runtimeFiles.childExecArgv, runtimeFiles.dataMover, ...(options.args ?? [])],
    {
      cwd: runtimeFiles.root,
      env: {
        ...process.env,
        ...options.environment,
        ...(options.job !== undefined ? { [DATA_MOVER_JOB_VARIABLE]: JSON.stringify(options.job) } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout = (stdout + chunk.toString('utf8')).slice(-MAX_OUTPUT_CHARS);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-MAX_OUTPUT_CHARS);
  });
  const exited = new Promise<DataMoverExit>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { pid: child.pid, kill: (signal) => child.kill(signal), exited };
}

/** The final progress document the command printed (its last stdout line), if any. */
export function finalProgressOf(exit: DataMoverExit): DataMoverProgress | undefined {
  const last = exit.stdout.trim().split('\n').at(-1);
  if (!last) return undefined;
  try {
    return dataMoverProgress.parse(JSON.parse(last));
  } catch {
    return undefined;
  }
}

/** Runs a job to its end; rejects with the command's reason unless it completed. */
export async function runDataMoverProcess(options: {
  job?: unknown;
  environment?: Readonly<Record<string, string>>;
}): Promise<DataMoverProgress> {
  const exit = await startDataMoverProcess(options).exited;
  const progress = finalProgressOf(exit);
  if (exit.code !== DATA_MOVER_EXIT.completed || !progress)
    throw new LifeboatError(
      `the data mover exited with ${exit.code ?? exit.signal}: ${exit.stderr.trim() || 'no reason given'}`,
    );
  return progress;
}

/**
 * `ecs:runTask.sync` of the data mover's task: the job from the RunTask request's container
 * override, run to its end. Answers as Step Functions does once the task stopped.
 */
export async function runDataMoverTask(
  runTask: unknown,
  options: { environment?: Readonly<Record<string, string>> } = {},
): Promise<{ StopCode: string; LastStatus: string; Containers: { ExitCode: number }[] }> {
  const job = containerEnvironment(runTask)[DATA_MOVER_JOB_VARIABLE];
  if (job === undefined)
    throw new LifeboatError(`the RunTask request's container override has no ${DATA_MOVER_JOB_VARIABLE}`);
  // The job's text as the override carries it: the command validates it.
  await runDataMoverProcess({ environment: { ...options.environment, [DATA_MOVER_JOB_VARIABLE]: job } });
  return {
    StopCode: 'EssentialContainerExited',
    LastStatus: 'STOPPED',
    Containers: [{ ExitCode: DATA_MOVER_EXIT.completed }],
  };
}
