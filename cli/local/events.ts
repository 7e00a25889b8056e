/**
 * The event of a local run's end (functions/publish-outcome), appended to the backup directory's
 * events file, which `lifeboat events` shows: what EventBridge receives from a deployment. A run
 * whose event cannot be written still ran: that is said on stderr, never made its failure.
 */
import { publishOutcome } from '../../functions/publish-outcome/publish-outcome.js';
import { LocalEventFile } from '../../shared/adapters/local-event-file.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import type { Execution } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

export async function publishLocalOutcome(options: {
  readonly store: ObjectStore;
  readonly execution: Pick<Execution, 'workflow' | 'name' | 'status' | 'input' | 'error' | 'cause'>;
  readonly warn: (message: string) => void;
}): Promise<void> {
  const { store, execution } = options;
  if (!store.location.startsWith('file://')) return;
  try {
    await publishOutcome(
      {
        workflow: execution.workflow,
        executionName: execution.name,
        status: execution.status,
        input: execution.input,
        ...(execution.error ? { error: execution.error } : {}),
        ...(execution.cause ? { cause: execution.cause } : {}),
      },
      { store, bus: new LocalEventFile(store.location.slice('file://'.length)), clock: systemClock },
    );
  } catch (error) {
    options.warn(
      `the run's event could not be written: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** An execution's end as a local run saw it: its result, or the failure it threw. */
export function endOf(
  outcome: { ok: true } | { ok: false; error: unknown },
): Pick<Execution, 'status' | 'error' | 'cause'> {
  if (outcome.ok) return { status: 'SUCCEEDED' };
  // An ExecutionFailed (local-state-machine.ts), known by its failure: importing the class would
  // load the state machine interpreter into `backup delete`.
  const failure = (outcome.error as { failure?: { error: string; cause: string } } | undefined)?.failure;
  return {
    status: 'FAILED',
    error: failure?.error ?? (outcome.error instanceof Error ? outcome.error.name : 'Error'),
    cause: failure?.cause ?? (outcome.error instanceof Error ? outcome.error.message : String(outcome.error)),
  };
}

/** A local deletion's event: as the delete workflow's, from what `backup delete --local` did. */
export async function publishLocalDeletion(options: {
  readonly store: ObjectStore;
  readonly name: string;
  readonly result: { readonly deleted: boolean; readonly errors: readonly string[] } & Record<
    string,
    unknown
  >;
  readonly warn: (message: string) => void;
}): Promise<void> {
  const { store, name, result } = options;
  if (!store.location.startsWith('file://')) return;
  const phase = result.deleted ? 'Completed' : 'Failed';
  await new LocalEventFile(store.location.slice('file://'.length))
    .publish({
      detailType: `Deletion ${phase}`,
      detail: { backup: name, phase, status: { phase: 'Processed', ...result } },
      time: systemClock.now(),
    })
    .catch((error: unknown) =>
      options.warn(
        `the deletion's event could not be written: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
}
