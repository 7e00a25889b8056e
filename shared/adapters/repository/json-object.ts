/** The repository's plain JSON objects (leases, locks, GC records) read back and parsed. */
import { RepositoryObjectCorrupt } from '../../domain/errors.js';
import type { ObjectStore } from '../../ports/object-store.js';

/** The parsed object, undefined when it does not exist; RepositoryObjectCorrupt when unparsable. */
export async function readJson<T>(options: {
  store: ObjectStore;
  key: string;
  parse: (value: unknown) => T;
  signal?: AbortSignal;
}): Promise<T | undefined> {
  const bytes = await options.store.get(options.key, { signal: options.signal });
  if (!bytes) return undefined;
  try {
    return options.parse(JSON.parse(Buffer.from(bytes).toString('utf8')));
  } catch (error) {
    throw new RepositoryObjectCorrupt(options.key, 'not the expected JSON', { cause: error });
  }
}
