/** What the `lifeboat` commands share: list flags, the local store, usage errors. */
import { LocalDirectoryStore } from '../shared/adapters/local-directory-store.js';

export class UsageError extends Error {
  override name = 'UsageError';
}

/** `a,b , c` → ['a', 'b', 'c']; undefined stays undefined. */
export function csv(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

/** The backup location of a --local command (only --local exists until the API arrives). */
export function localStore(values: { local?: boolean; dir?: string }): LocalDirectoryStore {
  if (!values.local) {
    throw new UsageError(
      'only --local is available yet: the AWS API arrives with its own feature (use --local --dir DIR)',
    );
  }
  return new LocalDirectoryStore(values.dir ?? './lifeboat-backups');
}
