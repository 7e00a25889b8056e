import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { type ArchiveItem, readBackupArchive } from '../../../../shared/adapters/backup-archive-reader.js';
import { tarOf } from '../../../../shared/adapters/tar-archive.js';
import { HostileArchive } from '../../../../shared/domain/errors.js';
import {
  END_OF_ARCHIVE_BYTES,
  withoutEndOfArchive,
} from '../../../../shared/domain/storage/tar-fragments.js';

interface Entry {
  name: string;
  body?: string | Buffer;
  type?: 'file' | 'symlink' | 'link' | 'directory';
  linkname?: string;
}

async function archive(entries: Entry[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(Buffer.from(c as Uint8Array)));
  const done = new Promise<void>((resolve) => p.on('end', () => resolve()));
  for (const e of entries) {
    const type = e.type ?? 'file';
    if (type === 'file') p.entry({ name: e.name, mode: 0o755 }, e.body ?? '');
    else p.entry({ name: e.name, type, ...(e.linkname ? { linkname: e.linkname } : {}) });
  }
  p.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

async function read(body: Buffer, limits = {}) {
  const items: ArchiveItem[] = [];
  const summary = await readBackupArchive({
    body: Readable.from([body]),
    onItem: async (i) => void items.push(i),
    limits,
  });
  return { items, summary };
}

const cm = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'shop' } });

describe('reading a backup archive', () => {
  it('reads a Velero 1.x archive with API-group-version folders', async () => {
    const body = await archive([
      { name: 'metadata/version', body: '1.1.0\n' },
      { name: 'resources/', type: 'directory' },
      { name: 'resources/configmaps/namespaces/shop/a.json', body: cm('a') },
      { name: 'resources/configmaps/v1-preferredversion/namespaces/shop/a.json', body: cm('a') },
      { name: 'resources/widgets.example.com/v2/namespaces/shop/w.json', body: '{"kind":"Widget"}' },
      { name: 'resources/namespaces/cluster/shop.json', body: '{"kind":"Namespace"}' },
      { name: 'notes.txt', body: 'ignored' },
    ]);
    const { items, summary } = await read(body);
    expect(summary).toEqual({ formatVersion: '1.1.0', items: 4, ignored: ['notes.txt'] });
    expect(
      items.map((i) => [
        i.groupResource,
        i.version?.name ?? '',
        i.version?.preferred ?? false,
        i.namespace,
        i.name,
      ]),
    ).toEqual([
      ['configmaps', '', false, 'shop', 'a'],
      ['configmaps', 'v1', true, 'shop', 'a'],
      ['widgets.example.com', 'v2', false, 'shop', 'w'],
      ['namespaces', '', false, '', 'shop'],
    ]);
    expect(items[0]?.object).toMatchObject({ kind: 'ConfigMap' });
  });

  const hostile: [string, Entry[], Record<string, number>, RegExp][] = [
    ['path traversal', [{ name: 'resources/../../etc/cron.d/x.json', body: '{}' }], {}, /climbs out/],
    ['an absolute path', [{ name: '/etc/passwd', body: 'x' }], {}, /absolute path/],
    [
      'a symlink',
      [{ name: 'resources/pods/namespaces/a/p.json', type: 'symlink', linkname: '/etc/passwd' }],
      {},
      /symlink entry/,
    ],
    [
      'a hard link',
      [{ name: 'resources/pods/namespaces/a/p.json', type: 'link', linkname: 'metadata/version' }],
      {},
      /link entry/,
    ],
    [
      'an oversized entry',
      [{ name: 'resources/configmaps/namespaces/a/big.json', body: Buffer.alloc(4096, 32) }],
      { maxEntryBytes: 1024 },
      /over the 1024-byte limit/,
    ],
    [
      'malformed JSON',
      [{ name: 'resources/configmaps/namespaces/a/bad.json', body: '{"kind": ' }],
      {},
      /malformed JSON/,
    ],
    [
      'a JSON value that is not an object',
      [{ name: 'resources/configmaps/namespaces/a/arr.json', body: '[1,2]' }],
      {},
      /not a JSON object/,
    ],
    [
      'an unknown format version',
      [{ name: 'metadata/version', body: '2.0.0' }],
      {},
      /unsupported backup format/,
    ],
    [
      'a version file that is more than a version',
      [{ name: 'metadata/version', body: `1.1.0${' '.repeat(100)}` }],
      {},
      /over the 64-byte limit/,
    ],
    [
      'two entries for one item, with different data',
      [
        { name: 'resources/configmaps/namespaces/a/x.json', body: cm('x') },
        { name: 'resources/configmaps/namespaces/a/x.json', body: cm('y') },
      ],
      {},
      /a second entry for the same path/,
    ],
    [
      'two entries for one item, spelt differently',
      [
        { name: 'resources/configmaps/namespaces/a/x.json', body: cm('x') },
        { name: './resources/configmaps/namespaces/a/x.json', body: cm('x') },
      ],
      {},
      /a second entry for the same path/,
    ],
    [
      'two version files',
      [
        { name: 'metadata/version', body: '1.1.0' },
        { name: 'metadata/version', body: '1.1.0' },
      ],
      {},
      /a second entry for the same path/,
    ],
    [
      'more bytes outside resources/ than allowed, at the entry past the limit',
      [
        { name: 'junk/a.bin', body: Buffer.alloc(600) },
        { name: 'junk/b.bin', body: Buffer.alloc(600) },
      ],
      { maxOtherBytes: 1000 },
      /refused at entry "junk\/b.bin": more than 1000 bytes in entries outside resources\//,
    ],
    [
      'more entries than one PlanRestore step plans',
      [
        { name: 'resources/configmaps/namespaces/a/x.json', body: cm('x') },
        { name: 'resources/configmaps/namespaces/a/y.json', body: cm('y') },
        { name: 'resources/configmaps/namespaces/a/z.json', body: cm('z') },
      ],
      { maxEntries: 2 },
      /refused at entry "resources\/configmaps\/namespaces\/a\/z.json": more than 2 entries: more than one PlanRestore step can plan/,
    ],
    [
      'more decompressed bytes than one PlanRestore step reads',
      [
        { name: 'resources/configmaps/namespaces/a/x.json', body: cm('x') },
        { name: 'resources/configmaps/namespaces/a/y.json', body: `${cm('y')}${' '.repeat(8192)}` },
      ],
      { maxTotalBytes: 4096 },
      /more than 4096 bytes once decompressed: more than one PlanRestore step can read in its time/,
    ],
  ];
  it.each(hostile)('refuses %s', async (_, entries, limits, message) => {
    const body = await archive(entries);
    await expect(read(body, limits)).rejects.toSatisfy(
      (e: unknown) => e instanceof HostileArchive && message.test(e.message),
    );
  });

  it('refuses a gzip bomb before inflating it all', async () => {
    const body = await archive([
      { name: 'resources/configmaps/namespaces/a/zeros.json', body: Buffer.alloc(32 * 1024 * 1024) },
    ]);
    expect(body.length).toBeLessThan(100_000);
    await expect(
      read(body, { maxRatio: 100, ratioCheckAfterBytes: 1024 * 1024, maxEntryBytes: 64 * 1024 * 1024 }),
    ).rejects.toSatisfy((e: unknown) => e instanceof HostileArchive && /gzip bomb/.test(e.message));
  });

  it('skips entries outside resources/ unread, and reads on', async () => {
    const body = await archive([
      { name: 'junk/a.bin', body: '{not json' },
      { name: 'resources/configmaps/namespaces/a/x.json', body: cm('x') },
    ]);
    const { items, summary } = await read(body);
    expect(summary).toEqual({ formatVersion: undefined, items: 1, ignored: ['junk/a.bin'] });
    expect(items.map((i) => i.name)).toEqual(['x']);
  });

  it('refuses bytes that are not gzip', async () => {
    await expect(read(Buffer.from('plain text, not an archive'))).rejects.toBeInstanceOf(HostileArchive);
  });

  it('reads the tarballs Lifeboat writes: concatenated gzip members of tar fragments', async () => {
    const mtime = new Date(0);
    const members = Buffer.concat([
      gzipSync(withoutEndOfArchive(await tarOf([{ name: 'metadata/version', body: '1.1.0\n' }], { mtime }))),
      gzipSync(
        withoutEndOfArchive(
          await tarOf([{ name: 'resources/configmaps/namespaces/shop/a.json', body: cm('a') }], { mtime }),
        ),
      ),
      gzipSync(
        withoutEndOfArchive(
          await tarOf([{ name: 'resources/configmaps/namespaces/shop/b.json', body: cm('b') }], { mtime }),
        ),
      ),
      gzipSync(Buffer.alloc(END_OF_ARCHIVE_BYTES)),
    ]);
    const { items, summary } = await read(members);
    expect(summary.formatVersion).toBe('1.1.0');
    expect(items.map((i) => i.name)).toEqual(['a', 'b']);
  });
});
