/**
 * The data mover's set-times helper (functions/data-mover/set-times: Go, standard library only),
 * built for the tests and benchmarks that restore files with exact times, as the task's image
 * builds it. Cached by the hash of its sources under the tools cache; a build takes a second or
 * two and downloads nothing.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheRoot } from './versions.js';

const run = promisify(execFile);
const source = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'functions',
  'data-mover',
  'set-times',
);

/** The helper's path, built if this version of its sources has not been built yet. */
export async function ensureSetTimes(): Promise<string> {
  const digest = createHash('sha256');
  for (const file of ['go.mod', 'main.go']) digest.update(`${file}\n${await readFile(join(source, file))}`);
  const dir = join(cacheRoot(), 'set-times', digest.digest('hex').slice(0, 16));
  const binary = join(dir, 'set-times');
  if (existsSync(binary)) return binary;
  await mkdir(dir, { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  await run('go', ['build', '-trimpath', '-o', partial, '.'], {
    cwd: source,
    env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '' },
  });
  await rename(partial, binary);
  return binary;
}
