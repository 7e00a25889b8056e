/**
 * Kopia and restic for `npm run bench:peers`, built from the Go module proxy at the versions pinned
 * by the small modules in test/bench/peers/<tool>/ (go.mod and go.sum): `go build` of the tool's
 * main package inside that module, because `go install kopia@version` fails on the proxy's version
 * list. Cached under the tools cache by the hash of those inputs, like the control plane; built
 * only when the benchmark runs (`npm test` never needs them), at low priority on shared cores.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheRoot } from '../env/versions.js';

const run = promisify(execFile);
const here = join(dirname(fileURLToPath(import.meta.url)), 'peers');

export const PEERS = {
  kopia: { version: 'v0.23.1', main: 'github.com/kopia/kopia' },
  restic: { version: 'v0.19.1', main: 'github.com/restic/restic/cmd/restic' },
} as const;
export type Peer = keyof typeof PEERS;

/** The peer's binary, built first if this version of its module has not been built here. */
export async function ensurePeer(peer: Peer): Promise<string> {
  const module = join(here, peer);
  const digest = createHash('sha256').update(PEERS[peer].main);
  for (const file of ['go.mod', 'go.sum']) digest.update(`${file}\n${await readFile(join(module, file))}`);
  const dir = join(cacheRoot(), 'peers', `${peer}-${digest.digest('hex').slice(0, 16)}`);
  const binary = join(dir, peer);
  if (existsSync(binary)) return binary;
  process.stderr.write(`[bench] building ${peer} ${PEERS[peer].version} from the Go module proxy…\n`);
  const work = `${dir}.${process.pid}.work`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  // Built in a copy: -mod=mod may tidy the copy's go.mod, never the repository's.
  await cp(module, work, { recursive: true });
  await run(
    'nice',
    ['-n', '10', 'go', 'build', '-trimpath', '-ldflags=-s -w', '-o', join(work, peer), PEERS[peer].main],
    {
      cwd: work,
      env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=mod -p=2' },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  await mkdir(dir, { recursive: true });
  await rename(join(work, peer), binary);
  await rm(work, { recursive: true, force: true });
  return binary;
}
