/**
 * The backup location of a `--local` verb: the directory `--dir` names (or the default). A verb
 * that reads backups needs it to exist: a mistyped `--dir` is a usage error naming it, not an
 * empty list or "not found". Creates nothing.
 */
import { stat } from 'node:fs/promises';
import { LocalDirectoryStore } from '../shared/adapters/local-directory-store.js';
import { DEFAULT_DIR } from './common-flags.js';
import { UsageError } from './flags.js';

export async function localStore(
  values: { readonly local?: boolean; readonly dir?: string },
  options: { readonly mustExist: boolean },
): Promise<LocalDirectoryStore> {
  if (!values.local) throw new UsageError('this runs here only: add --local (and --dir DIR)');
  const dir = values.dir ?? DEFAULT_DIR;
  const named = values.dir === undefined ? `the default backup directory ${dir}` : `--dir ${dir}`;
  const found = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new UsageError(`${named}: ${error.code ?? error.message}`);
  });
  if (found && !found.isDirectory()) throw new UsageError(`${named} is not a directory`);
  if (!found && options.mustExist)
    throw new UsageError(
      `${named} does not exist (no backups there)${values.dir === undefined ? ': give --dir DIR' : ''}`,
    );
  return new LocalDirectoryStore(dir);
}

/** The directory of a local store, for messages. */
export function directoryOf(store: LocalDirectoryStore): string {
  return store.location.slice('file://'.length);
}
