/**
 * Writing what a step produces under backups/ or restores/ exactly once: an object already there
 * is this run's own earlier write (the name is claimed for the run), so a retried step completes
 * what a crashed one began and never overwrites anything.
 */
import { AlreadyExists } from '../../shared/domain/errors.js';
import type { ObjectStore, PutOptions } from '../../shared/ports/object-store.js';

export async function putOnce(
  store: ObjectStore,
  key: string,
  body: Uint8Array | string,
  options: PutOptions = {},
): Promise<void> {
  try {
    await store.put(key, body, { ...options, ifNoneMatch: true });
  } catch (error) {
    if (!(error instanceof AlreadyExists)) throw error;
  }
}

/** Streams an object once; false when it was already there (the body may then be unread). */
export async function putStreamOnce(
  store: ObjectStore,
  key: string,
  body: AsyncIterable<Uint8Array>,
  options: PutOptions = {},
): Promise<boolean> {
  try {
    await store.putStream(key, body, { ...options, ifNoneMatch: true });
    return true;
  } catch (error) {
    if (!(error instanceof AlreadyExists)) throw error;
    return false;
  }
}
