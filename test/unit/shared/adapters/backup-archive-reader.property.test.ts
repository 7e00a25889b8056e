/**
 * The archive reader on drawn archives: valid ones read back item for item, and each made hostile
 * in one of the ways an attacker (or a broken writer) would is refused as HostileArchive, never
 * read through nor failing with anything else.
 */
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { pack } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { type ArchiveLimits, readBackupArchive } from '../../../../shared/adapters/backup-archive-reader.js';
import { HostileArchive } from '../../../../shared/domain/errors.js';

interface Entry {
  readonly name: string;
  readonly body?: string | Buffer;
  readonly type?: 'file' | 'symlink' | 'link' | 'directory';
}

const RUNS = 600;

async function tarOfEntries(entries: readonly Entry[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(Buffer.from(c as Uint8Array)));
  const done = new Promise<void>((resolve) => p.on('end', () => resolve()));
  for (const e of entries) {
    const type = e.type ?? 'file';
    if (type === 'file') p.entry({ name: e.name, mode: 0o644 }, e.body ?? '');
    else p.entry({ name: e.name, type, ...(type === 'directory' ? {} : { linkname: 'metadata/version' }) });
  }
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?$/);
const resource = fc.constantFrom('configmaps', 'secrets', 'deployments.apps', 'widgets.example.com', 'pods');

/** A valid archive: the version, then distinct items (some with their preferred-version copy). */
const validArchive = fc
  .uniqueArray(fc.tuple(resource, name, name, fc.boolean()), {
    minLength: 1,
    maxLength: 12,
    selector: ([r, ns, n]) => `${r}/${ns}/${n}`,
  })
  .map((items) => {
    const entries: Entry[] = [{ name: 'metadata/version', body: '1.1.0\n' }];
    for (const [r, ns, n, copy] of items) {
      const body = JSON.stringify({ kind: 'Thing', metadata: { name: n, namespace: ns }, data: { x: n } });
      entries.push({ name: `resources/${r}/namespaces/${ns}/${n}.json`, body });
      if (copy) entries.push({ name: `resources/${r}/v1-preferredversion/namespaces/${ns}/${n}.json`, body });
    }
    return entries;
  });

const itemEntries = (entries: readonly Entry[]) => entries.filter((e) => e.name.startsWith('resources/'));

/** One way to make an archive hostile: the entries (or bytes) changed, and the limits read with. */
interface Hostility {
  readonly kind: string;
  readonly entries?: (valid: Entry[], at: number) => Entry[];
  readonly bytes?: (tar: Buffer, at: number) => Buffer;
  readonly limits?: (valid: Entry[]) => Partial<ArchiveLimits>;
}

const inserted = (make: (valid: Entry[]) => Entry) => (valid: Entry[], at: number) => {
  const out = [...valid];
  out.splice(1 + (at % valid.length), 0, make(valid));
  return out;
};

const hostilities: fc.Arbitrary<Hostility> = fc.oneof(
  fc
    .constantFrom(
      'resources/../../etc/cron.d/x.json',
      '../outside.json',
      'resources/configmaps/namespaces/a/../../../../x.json',
      '/etc/passwd',
      'C:/Windows/x.json',
      'resources\\configmaps\\x.json',
      `resources/${'d/'.repeat(600)}x.json`,
    )
    .map(
      (bad): Hostility => ({ kind: 'a hostile name', entries: inserted(() => ({ name: bad, body: '{}' })) }),
    ),
  fc.constantFrom<Entry['type']>('symlink', 'link').map(
    (type): Hostility => ({
      kind: `a ${type}`,
      entries: inserted((valid) => ({ name: `${itemEntries(valid)[0]?.name ?? 'x'}.link.json`, type })),
    }),
  ),
  fc.boolean().map(
    (dotted): Hostility => ({
      kind: 'a duplicate entry',
      entries: (valid, at) => {
        const items = itemEntries(valid);
        const twin = items[at % items.length] as Entry;
        return [...valid, { name: dotted ? `./${twin.name}` : twin.name, body: twin.body ?? '' }];
      },
    }),
  ),
  fc.constantFrom('{"kind": ', '[1, 2]', '42', '"text"', 'null', '\u0000\u0001', '{} trailing').map(
    (body): Hostility => ({
      kind: 'an item that is no JSON object',
      entries: inserted(() => ({ name: 'resources/configmaps/namespaces/zz/bad.json', body })),
    }),
  ),
  fc.integer({ min: 2049, max: 8192 }).map(
    (size): Hostility => ({
      kind: 'an oversized item',
      entries: inserted(() => ({
        name: 'resources/configmaps/namespaces/zz/big.json',
        body: Buffer.alloc(size, 32),
      })),
      limits: () => ({ maxEntryBytes: 2048 }),
    }),
  ),
  fc.constantFrom('2.0.0', 'one', '1.1', `1.1.0${' '.repeat(80)}`).map(
    (version): Hostility => ({
      kind: 'a bad version',
      entries: (valid) => [{ name: 'metadata/version', body: version }, ...valid.slice(1)],
    }),
  ),
  fc.constant<Hostility>({
    kind: 'more entries than a step plans',
    limits: (valid) => ({ maxEntries: valid.length - 2 }),
    entries: (valid) => valid,
  }),
  fc.integer({ min: 1, max: 4 }).map(
    (count): Hostility => ({
      kind: 'too many bytes outside resources/',
      entries: (valid) => [
        ...valid,
        ...Array.from({ length: count }, (_, i) => ({ name: `junk/${i}.bin`, body: Buffer.alloc(700) })),
      ],
      limits: () => ({ maxOtherBytes: 512 }),
    }),
  ),
  fc.constant<Hostility>({
    kind: 'more bytes than a step reads',
    entries: (valid) => [
      ...valid,
      { name: 'resources/configmaps/namespaces/zz/pad.json', body: `{}${' '.repeat(8192)}` },
    ],
    limits: () => ({ maxTotalBytes: 4096 }),
  }),
  fc.constant<Hostility>({
    kind: 'a gzip bomb',
    entries: (valid) => [
      ...valid,
      { name: 'resources/configmaps/namespaces/zz/bomb.json', body: Buffer.alloc(4 * 1024 * 1024, 32) },
    ],
    limits: () => ({ maxRatio: 50, ratioCheckAfterBytes: 64 * 1024, maxEntryBytes: 8 * 1024 * 1024 }),
  }),
  fc.constant<Hostility>({
    kind: 'a gzip stream cut short',
    bytes: (tar, at) => gzipSync(tar).subarray(0, 10 + (at % 200)),
  }),
  fc.uint8Array({ minLength: 1, maxLength: 2048 }).map(
    (junk): Hostility => ({
      kind: 'bytes that are no gzip',
      bytes: () => Buffer.concat([Buffer.from('not gzip'), junk]),
    }),
  ),
);

async function read(body: Buffer, limits: Partial<ArchiveLimits> = {}) {
  const items: string[] = [];
  await readBackupArchive({
    body: Readable.from([body]),
    onItem: async (i) => void items.push(i.name),
    limits,
  });
  return items;
}

describe('the archive reader on drawn archives (property)', () => {
  it('reads every valid archive item for item', async () => {
    let drawn = 0;
    await fc.assert(
      fc.asyncProperty(validArchive, async (entries) => {
        drawn++;
        const items = await read(gzipSync(await tarOfEntries(entries)));
        expect(items).toEqual(
          itemEntries(entries).map((e) =>
            e.name
              .split('/')
              .at(-1)
              ?.replace(/\.json$/, ''),
          ),
        );
      }),
      { numRuns: RUNS },
    );
    console.info(`archive reader: drew ${drawn} valid archives, each read item for item`);
  });

  it('refuses every archive made hostile, as HostileArchive and nothing else', async () => {
    let drawn = 0;
    await fc.assert(
      fc.asyncProperty(validArchive, hostilities, fc.nat(), async (valid, hostility, at) => {
        drawn++;
        const entries = hostility.entries ? hostility.entries(valid, at) : valid;
        const tar = await tarOfEntries(entries);
        const body = hostility.bytes ? hostility.bytes(tar, at) : gzipSync(tar);
        const error = await read(body, hostility.limits?.(valid)).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, hostility.kind).toBeInstanceOf(HostileArchive);
      }),
      { numRuns: RUNS },
    );
    console.info(`archive reader: drew ${drawn} hostile archives, each refused as HostileArchive`);
  });
});
