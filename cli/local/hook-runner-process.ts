/**
 * `ecs:runTask.sync` under `lifeboat --local`: the hook runner's container entry
 * (functions/hook-runner/main.ts) started as a child process with the environment the task's
 * container override carries, plus what the task definition would give it — here the local
 * store's directory and the cluster's kubeconfig (written to a private temporary file, removed
 * afterwards). Resolves once the process exits 0; rejects with its stderr otherwise. Never
 * changes what the state machine asked for.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LifeboatError } from '../../shared/domain/errors.js';
import { runtimeFiles } from './runtime-files.js';

/** The hook runner task's RunTask placeholders locally (the task runs as a child process). */
export const LOCAL_HOOK_RUNNER_TASK: Readonly<Record<string, string>> = {
  HookRunnerClusterArn: 'arn:aws:ecs:local:000000000000:cluster/lifeboat-local',
  HookRunnerTaskDefinitionArn: 'arn:aws:ecs:local:000000000000:task-definition/lifeboat-hook-runner:1',
  HookRunnerSubnetIds: 'subnet-local',
  HookRunnerSecurityGroupId: 'sg-local',
  HookRunnerAssignPublicIp: 'DISABLED',
};

/** What the local "task" keeps of the process's output: enough for a failure's reason. */
const MAX_OUTPUT_CHARS = 16 * 1024;

/** The `Environment` of the first container override of a RunTask request. */
export function containerEnvironment(runTask: unknown): Record<string, string> {
  const overrides = (runTask as { Overrides?: { ContainerOverrides?: { Environment?: unknown }[] } })
    .Overrides;
  const environment = overrides?.ContainerOverrides?.[0]?.Environment;
  if (!Array.isArray(environment))
    throw new LifeboatError('the RunTask request has no container override environment');
  return Object.fromEntries(
    environment.map((e: { Name?: unknown; Value?: unknown }) => [String(e.Name), String(e.Value)]),
  );
}

/** Runs the hook runner to its end, as a Fargate task would. */
export async function runHookRunnerProcess(options: {
  /** The container override's variables (LIFEBOAT_HOOK_RUN). */
  environment: Readonly<Record<string, string>>;
  /** A `file://` store location, or variables that reach the store (LIFEBOAT_BUCKET, AWS_*). */
  storeLocation: string;
  storeEnvironment?: Readonly<Record<string, string>>;
  /** The cluster's kubeconfig, as text (KubeConfig.exportConfig()). */
  kubeconfig: string;
}): Promise<{ stdout: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'lifeboat-hook-runner-'));
  try {
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, options.kubeconfig, { mode: 0o600 });
    const store = options.storeLocation.startsWith('file://')
      ? { LIFEBOAT_STORE_DIR: fileURLToPath(options.storeLocation) }
      : (options.storeEnvironment ?? {});
    if (!('LIFEBOAT_STORE_DIR' in store) && !('LIFEBOAT_BUCKET' in store))
      throw new LifeboatError(
        `a long hook run cannot reach the store ${options.storeLocation}: give the hook runner's store environment`,
      );
    const child = spawn(process.execPath, [...runtimeFiles.childExecArgv, runtimeFiles.hookRunner], {
      cwd: runtimeFiles.root,
      env: { ...process.env, ...store, ...options.environment, LIFEBOAT_KUBECONFIG: kubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout = (stdout + chunk.toString('utf8')).slice(-MAX_OUTPUT_CHARS);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-MAX_OUTPUT_CHARS);
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) throw new LifeboatError(`the hook runner exited with ${code}: ${stderr.trim()}`);
    return { stdout };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
