/**
 * What the remote verbs share: refusing the flags that only mean something with --local, the
 * API's error answers said in a line or two (a 400's field problems named by the flag they came
 * from), every page of a list, the cluster a create goes to, and waiting on a run.
 */
import type { ObjectList } from '../../shared/contracts/api.js';
import { UsageError } from '../flags.js';
import { flagOfPath } from '../request-check.js';
import type { Io } from '../verb-call.js';
import { type Api, ApiFailure, apiClient } from './client.js';

const LOCAL_ONLY = [
  'dir',
  'kubeconfig',
  'context',
  'snapshot-region',
  'repository-key-file',
  'repack-dead-fraction',
];

/** The flags of a --local run given to a remote one: a usage error naming them. */
export function refuseLocalFlags(values: Readonly<Record<string, unknown>>): void {
  const given = LOCAL_ONLY.filter((flag) => values[flag] !== undefined);
  if (given.length > 0)
    throw new UsageError(
      `${given.map((f) => `--${f}`).join(', ')} ${given.length > 1 ? 'are' : 'is'} for --local runs: a deployment uses its own storage, clusters and keys`,
    );
}

/** Prints an error answer of the API; its exit status (2 for a request the API refused as invalid). */
export function reportFailure(error: unknown, io: Io): number {
  if (!(error instanceof ApiFailure)) throw error;
  const { body, status } = error;
  if (body.problems?.length) {
    for (const p of body.problems) {
      const flag = flagOfPath(p.path);
      io.err.write(`lifeboat: ${flag === p.path ? p.path : `${flag} (${p.path})`}: ${p.message}\n`);
    }
  } else io.err.write(`lifeboat: ${body.message}\n`);
  return status === 400 ? 2 : 1;
}

/** Every item of a list, page after page. */
export async function allPages<T>(
  api: Api,
  path: string,
  filters: Readonly<Record<string, string>> = {},
): Promise<T[]> {
  const items: T[] = [];
  let next: string | undefined;
  do {
    const page: ObjectList<T> = await api.call({
      method: 'GET',
      path,
      query: next ? { ...filters, continue: next } : { ...filters },
    });
    items.push(...page.items);
    next = page.metadata.continue;
  } while (next);
  return items;
}

/** The cluster a create goes to: the one named, else the deployment's only one. */
export async function clusterFor(api: Api, named: string | undefined): Promise<string> {
  if (named) return named;
  const { items } = await api.call<{ items: { name: string }[] }>({ method: 'GET', path: '/clusters' });
  const [only, other] = items;
  if (only && !other) return only.name;
  throw new UsageError(
    `give --cluster NAME: the deployment serves ${items.length ? items.map((c) => c.name).join(', ') : 'no cluster'}`,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `done` says the object has ended; tells `onChange` of each new state. */
export async function waitFor<T>(options: {
  readonly get: () => Promise<T>;
  readonly done: (object: T) => boolean;
  readonly onChange?: (object: T) => void;
  readonly key: (object: T) => string;
}): Promise<T> {
  let last = '';
  for (let delay = 250; ; delay = Math.min(2000, delay * 2)) {
    const object = await options.get();
    const key = options.key(object);
    if (key !== last) options.onChange?.(object);
    last = key;
    if (options.done(object)) return object;
    await sleep(delay);
  }
}

/** Runs a remote verb: the local-only flags refused, the API's refusals reported. */
export async function remote(
  values: { readonly endpoint?: string | undefined } & Readonly<Record<string, unknown>>,
  io: Io,
  run: (api: Api) => Promise<number>,
): Promise<number> {
  refuseLocalFlags(values);
  const api = await apiClient(values.endpoint);
  try {
    return await run(api);
  } catch (error) {
    return reportFailure(error, io);
  }
}
