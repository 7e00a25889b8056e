import fc from 'fast-check';
import { pack } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { type TarEntry, tarOf } from '../../../../shared/adapters/tar-archive.js';

/** The archive as tar-stream alone writes it: the bytes tarOf must reproduce. */
async function tarStreamOf(entries: readonly TarEntry[], mtime: Date): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: unknown) => chunks.push(Buffer.from(chunk as Uint8Array)));
  const ended = new Promise<void>((resolve, reject) => {
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  for (const entry of entries)
    archive.entry({ name: entry.name, mode: 0o755, mtime, type: 'file' }, Buffer.from(entry.body));
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

const segment = fc.string({ unit: fc.constantFrom(...'abcz09.-'), minLength: 1, maxLength: 70 });
/** Names of every kind: short, long enough for a ustar prefix, too long for one, not ASCII. */
const name = fc.oneof(
  fc.array(segment, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('/')),
  fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => `resources/${parts.join('/')}/é-ü.json`),
  fc.string({ unit: fc.constantFrom('a', 'b'), minLength: 101, maxLength: 160 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => !s.includes('\0')),
);
const body = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 1500 }),
  fc.uint8Array({ maxLength: 1100 }),
  fc.constantFrom('', 'x'.repeat(512), '{"kind":"ConfigMap"}'),
);

describe('tarOf', () => {
  it('writes the bytes tar-stream writes, entry for entry, for any names and bodies', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ name, body }), { maxLength: 8 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 4_000_000_000 }),
        async (entries, twice, seconds) => {
          // An item's two copies (its preferred-version entry) share one body.
          const all = twice
            ? entries.flatMap((e) => [e, { name: `${e.name}-preferredversion`, body: e.body }])
            : entries;
          const mtime = new Date(seconds * 1000);
          // As hex: a byte-wise toEqual of Buffers is slow.
          const ours = Buffer.from(await tarOf(all, { mtime })).toString('hex');
          expect(ours).toBe((await tarStreamOf(all, mtime)).toString('hex'));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('fits a prefix of 155 bytes and a name of 100 into a ustar header, one byte more into a pax header', async () => {
    const mtime = new Date('2026-01-02T03:04:05Z');
    for (const [prefix, name, pax] of [
      [155, 100, false],
      [156, 100, true],
      [155, 101, true],
    ] as const) {
      const entries = [{ name: `${'p'.repeat(prefix)}/${'n'.repeat(name)}`, body: '{}' }];
      const tar = Buffer.from(await tarOf(entries, { mtime }));
      expect(tar.toString('hex')).toBe((await tarStreamOf(entries, mtime)).toString('hex'));
      expect(String.fromCharCode(tar[156] as number)).toBe(pax ? 'x' : '0');
    }
  });

  it('splits a long path into a ustar prefix and uses a pax header past that', async () => {
    const mtime = new Date('2026-01-02T03:04:05Z');
    const long = `resources/${'a'.repeat(60)}/namespaces/${'b'.repeat(63)}/${'c'.repeat(90)}.json`;
    const tooLong = `resources/x/${'d'.repeat(120)}.json`;
    const entries = [
      { name: long, body: '{}' },
      { name: tooLong, body: 'é' },
      { name: 'metadata/version', body: '1.1.0\n' },
    ];
    const tar = Buffer.from(await tarOf(entries, { mtime }));
    expect(tar.toString('hex')).toBe((await tarStreamOf(entries, mtime)).toString('hex'));
    // The prefix field (offset 345) holds the directories; the name field the rest.
    expect(tar.subarray(345, 345 + 80).toString('latin1')).toContain(`resources/${'a'.repeat(60)}`);
    // The second entry starts with a pax header block (typeflag 'x').
    expect(String.fromCharCode(tar[1024 + 156] as number)).toBe('x');
  });
});
