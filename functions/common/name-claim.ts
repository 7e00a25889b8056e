/**
 * Claiming a backup or restore name for one run: a create-if-absent write, so two runs can never
 * use the same name. A retried step of the same run finds its own claim and goes on, with the
 * start time the first attempt recorded. A dry run asks `nameTaken` instead: the same answer for
 * a new run, and nothing written.
 */
import { AlreadyExists } from '../../shared/domain/errors.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

export type ClaimResult = { readonly taken: false; readonly startedAt: Date } | { readonly taken: true };

export async function claimName(options: {
  store: ObjectStore;
  key: string;
  runId: string;
  startedAt: Date;
}): Promise<ClaimResult> {
  const claim = JSON.stringify({ runId: options.runId, startedAt: options.startedAt.toISOString() });
  try {
    await options.store.put(options.key, claim, { ifNoneMatch: true, contentType: 'application/json' });
    return { taken: false, startedAt: options.startedAt };
  } catch (error) {
    if (!(error instanceof AlreadyExists)) throw error;
  }
  const raw = await options.store.get(options.key);
  const existing = JSON.parse(Buffer.from(raw ?? []).toString() || '{}') as {
    runId?: string;
    startedAt?: string;
  };
  if (existing.runId !== options.runId) return { taken: true };
  return { taken: false, startedAt: existing.startedAt ? new Date(existing.startedAt) : options.startedAt };
}

/** Whether a new run would find the name taken, as `claimName` would, writing nothing. */
export async function nameTaken(options: { store: ObjectStore; key: string }): Promise<boolean> {
  return options.store.exists(options.key);
}
