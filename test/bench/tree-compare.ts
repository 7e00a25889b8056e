/**
 * Compares a restored tree with its source for the benchmarks: every entry's kind, content
 * (SHA-256), mode, owner and mtime to the nanosecond, and sparseness (a restored file may not
 * allocate more than its source plus a few blocks). Returns the differences, at most `limit`.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

interface Seen {
  readonly kind: string;
  readonly mode: number;
  readonly owner: string;
  readonly mtimeNs: bigint;
  readonly blocks: number;
  readonly content: string;
}

async function describe(path: string): Promise<Seen> {
  const s = await lstat(path, { bigint: true });
  const kind = s.isDirectory() ? 'dir' : s.isSymbolicLink() ? 'symlink' : s.isFile() ? 'file' : 'other';
  const content =
    kind === 'file'
      ? createHash('sha256')
          .update(await readFile(path))
          .digest('hex')
      : kind === 'symlink'
        ? await readlink(path)
        : '';
  return {
    kind,
    mode: Number(s.mode & 0o7777n),
    owner: `${s.uid}:${s.gid}`,
    mtimeNs: s.mtimeNs,
    blocks: Number(s.blocks),
    content,
  };
}

/** Differences between `source` and `restored` (the root's own times are not compared). */
export async function compareTrees(source: string, restored: string, limit = 10): Promise<string[]> {
  const problems: string[] = [];
  const names = async (root: string): Promise<string[]> =>
    ((await readdir(root, { recursive: true })) as string[]).sort();
  const [want, got] = await Promise.all([names(source), names(restored)]);
  const gotSet = new Set(got);
  const wantSet = new Set(want);
  for (const name of got) if (!wantSet.has(name)) problems.push(`${name}: not in the source`);
  for (const name of want) {
    if (problems.length >= limit) break;
    if (!gotSet.has(name)) {
      problems.push(`${name}: missing`);
      continue;
    }
    const [a, b] = await Promise.all([describe(join(source, name)), describe(join(restored, name))]);
    for (const field of ['kind', 'content', 'mode', 'owner', 'mtimeNs'] as const)
      if (a[field] !== b[field]) problems.push(`${name}: ${field} ${b[field]}, the source's ${a[field]}`);
    if (a.kind === 'file' && b.blocks > a.blocks + 64)
      problems.push(`${name}: ${b.blocks} blocks allocated, the source ${a.blocks} (holes not kept)`);
  }
  return problems.slice(0, limit);
}
