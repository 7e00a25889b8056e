/**
 * Starting a backup's or restore's execution for a create request, safely retried: the
 * execution's name comes from the object's name (execution-names.ts), so the same request again
 * finds the execution it started (and is answered as the first was), while a different request
 * for a name in use, or one whose name is taken in the store, is a 409 naming it.
 */
import { AlreadyExists } from '../../shared/domain/errors.js';
import type { Executions, Workflow } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { executionName, generationOf } from '../common/execution-names.js';

export type StartOutcome = 'started' | 'retried' | 'taken';

export async function startOnce(options: {
  readonly workflow: Extract<Workflow, 'backup' | 'restore'>;
  readonly name: string;
  readonly request: unknown;
  /** Keys whose presence means the name is in use (the object's document, its claim). */
  readonly takenKeys: readonly string[];
  readonly store: ObjectStore;
  readonly executions: Executions;
  readonly signal?: AbortSignal;
}): Promise<StartOutcome> {
  const { workflow, name, store, executions } = options;
  const kind = workflow === 'backup' ? 'backups' : 'restores';
  const generation = await generationOf({ store, kind, name });
  const execution = executionName({ workflow, name, generation });
  const input = JSON.stringify({ request: options.request });
  const withSignal = options.signal ? { signal: options.signal } : {};
  const same = async (): Promise<StartOutcome> => {
    const existing = await executions.describe({ workflow, name: execution, ...withSignal });
    return existing && existing.input === input ? 'retried' : 'taken';
  };
  if (await executions.describe({ workflow, name: execution, ...withSignal })) return same();
  for (const key of options.takenKeys) if (await store.exists(key, withSignal)) return 'taken';
  try {
    await executions.start({ workflow, name: execution, input, ...withSignal });
    return 'started';
  } catch (error) {
    if (error instanceof AlreadyExists) return same();
    throw error;
  }
}
