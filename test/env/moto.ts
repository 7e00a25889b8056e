/**
 * The moto AWS emulator for tests: one server on loopback, path-style S3, Step Functions
 * execution off (our own local ASL runtime executes the state machines), ECS task state
 * transitions on so RunTask → DescribeTasks reaches STOPPED.
 */
import { join } from 'node:path';
import type { Tools } from './ensure-tools.js';
import { freePort, startProcess, waitReady } from './processes.js';

export interface AwsInfo {
  readonly endpoint: string;
  readonly region: string;
  /** Moto keeps one backend per account; AssumeRole into a role of the DR account lands there. */
  readonly accounts: { readonly source: string; readonly dr: string };
  readonly pid: number;
}

export const SOURCE_ACCOUNT = '123456789012';
export const DR_ACCOUNT = '210987654321';

async function postJson(url: string, body: unknown): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`test environment: moto ${url} answered HTTP ${res.status}`);
}

export async function startMoto(options: {
  rootDir: string;
  tools: Tools;
  detached?: boolean;
}): Promise<AwsInfo> {
  const port = await freePort();
  // moto's docs: clients should use localhost rather than 127.0.0.1.
  const endpoint = `http://localhost:${port}`;
  const proc = await startProcess({
    component: 'moto server',
    command: options.tools.motoPython,
    args: [options.tools.motoLauncher, `--port=${port}`],
    logFile: join(options.rootDir, 'moto.log'),
    detached: options.detached,
    env: { MOTO_ACCOUNT_ID: undefined },
  });
  await waitReady(proc, async () => (await fetch(`${endpoint}/moto-api/`)).ok, 60_000);
  await postJson(`${endpoint}/moto-api/config`, {
    stepfunctions: { execute_state_machine: false },
    lambda: { use_docker: false },
  });
  await postJson(`${endpoint}/moto-api/state-manager/set-transition`, {
    model_name: 'ecs::task',
    transition: { progression: 'manual', times: 1 },
  });
  return {
    endpoint,
    region: 'us-east-1',
    accounts: { source: SOURCE_ACCOUNT, dr: DR_ACCOUNT },
    pid: proc.pid,
  };
}
