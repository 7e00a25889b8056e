import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HostileFileTree } from '../../../../../shared/domain/errors.js';
import {
  compareRawNames,
  encodeContentList,
  encodeTreeBlob,
  type FileTreeEntry,
  fileTreeChildren,
  parseFileTreeBlob,
  rawNameBytes,
  rawNameOf,
  treePages,
} from '../../../../../shared/domain/files/tree.js';

const id = (n: number): string => n.toString(16).padStart(64, '0');
const owner = { uid: 1000, gid: 100, mtimeNs: '1700000000123456789' };
const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
const tree = (entries: unknown[], extra: Record<string, unknown> = {}): Uint8Array =>
  bytes({ format: 'lifeboat.file-tree', version: 1, entries, ...extra });

const sample: FileTreeEntry[] = [
  { name: 'a.txt', type: 'file', mode: 0o644, ...owner, size: 10, content: [[0, 10, id(1)]] },
  { name: 'big', type: 'file', mode: 0o600, ...owner, size: 1 << 30, contentLists: [id(2), id(3)] },
  { name: 'd', type: 'dir', mode: 0o2755, ...owner, tree: id(4) },
  { name: 'link', type: 'symlink', ...owner, target: '../../etc/passwd' },
  { name: 'same', type: 'hardlink', linkTo: ['a.txt'] },
  { name: 'sparse', type: 'file', mode: 0o644, ...owner, size: 1 << 20, content: [[4096, 10, id(5)]] },
];

describe('file tree blobs', () => {
  it('parse back to what was encoded', () => {
    const blob = encodeTreeBlob({
      entries: sample,
      more: [id(9)],
      directory: { mode: 0o755, uid: 0, gid: 0, mtimeNs: '1' },
    });
    expect(parseFileTreeBlob(blob)).toEqual({
      format: 'lifeboat.file-tree',
      version: 1,
      directory: { mode: 0o755, uid: 0, gid: 0, mtimeNs: '1' },
      entries: sample,
      more: [id(9)],
    });
    expect(parseFileTreeBlob(encodeContentList([[0, 5, id(7)]]))).toEqual({
      format: 'lifeboat.file-content',
      version: 1,
      pieces: [[0, 5, id(7)]],
    });
  });

  it('name every blob garbage collection must keep: subtrees, pages and content lists to expand, chunks as data', () => {
    expect(fileTreeChildren(encodeTreeBlob({ entries: sample, more: [id(9)] }))).toEqual({
      nested: [id(9), id(2), id(3), id(4)],
      data: [id(1), id(5)],
    });
    expect(
      fileTreeChildren(
        encodeContentList([
          [0, 5, id(7)],
          [5, 5, id(8)],
        ]),
      ),
    ).toEqual({
      nested: [],
      data: [id(7), id(8)],
    });
  });

  it.each([
    ['..', 'is not allowed'],
    ['.', 'is not allowed'],
    ['a/b', "contains '/'"],
    ['/etc', "contains '/'"],
    ['', 'an empty name'],
    ['a\u0000b', 'NUL'],
    [{ base64: btoa('../x') }, "contains '/'"],
    [{ base64: btoa('..') }, 'is not allowed'],
    [7, 'must be a string or { base64 }'],
  ])('refuses the entry name %j that would leave its directory', (name, reason) => {
    const blob = tree([{ name, type: 'dir', mode: 0o755, ...owner, tree: id(1) }]);
    expect(() => parseFileTreeBlob(blob, 'b1')).toThrow(HostileFileTree);
    expect(() => parseFileTreeBlob(blob, 'b1')).toThrow(reason);
    expect(() => parseFileTreeBlob(blob, 'b1')).toThrow(
      'the file snapshot is refused at b1: entries[0].name',
    );
  });

  it('refuses a hard link whose path climbs out with ..', () => {
    const blob = tree([{ name: 'x', type: 'hardlink', linkTo: ['d', '..', '..', 'etc'] }]);
    expect(() => parseFileTreeBlob(blob)).toThrow('entries[0] (x).linkTo[1]: the name ".." is not allowed');
  });

  it.each([
    [
      [
        [0, 10, id(1)],
        [5, 10, id(2)],
      ],
      100,
      'pieces overlap or are out of order',
    ],
    [
      [
        [10, 10, id(1)],
        [0, 5, id(2)],
      ],
      100,
      'pieces overlap or are out of order',
    ],
    [[[0, 0, id(1)]], 100, 'length: must be an integer of at least 1'],
    [[[95, 10, id(1)]], 100, 'a piece ends past the file size'],
    [[[0, 10, 'nothex']], 100, 'blob: not a blob id'],
    [[[-1, 10, id(1)]], 100, 'offset: must be an integer of at least 0'],
  ])('refuses file pieces %j of a %d-byte file', (content, size, reason) => {
    const blob = tree([{ name: 'f', type: 'file', mode: 0o644, ...owner, size, content }]);
    expect(() => parseFileTreeBlob(blob)).toThrow(reason);
  });

  it.each([
    [{ mode: 0o10644 }, 'mode: must be permission bits'],
    [{ uid: -1 }, 'uid: must be an integer'],
    [{ mtimeNs: 12 }, 'mtimeNs: must be a decimal string'],
    [{ type: 'socket' }, 'unknown entry type "socket"'],
    [{ contentLists: [id(3)] }, 'has both content and contentLists'],
  ])('refuses a malformed file entry %j naming the field', (change, reason) => {
    const blob = tree([{ name: 'f', type: 'file', mode: 0o644, ...owner, size: 1, content: [], ...change }]);
    expect(() => parseFileTreeBlob(blob)).toThrow(reason);
  });

  it('refuses duplicate or unordered names, unknown formats and versions, and non-JSON', () => {
    const f = { type: 'symlink', ...owner, target: 'x' };
    expect(() =>
      parseFileTreeBlob(
        tree([
          { name: 'b', ...f },
          { name: 'a', ...f },
        ]),
      ),
    ).toThrow('names must be unique and in byte order');
    expect(() =>
      parseFileTreeBlob(
        tree([
          { name: 'a', ...f },
          { name: 'a', ...f },
        ]),
      ),
    ).toThrow('unique');
    expect(() => parseFileTreeBlob(bytes({ format: 'other', version: 1 }))).toThrow('unknown format');
    expect(() => parseFileTreeBlob(tree([], { version: 2 }))).toThrow('unsupported version 2');
    expect(() => parseFileTreeBlob(new TextEncoder().encode('{not json'))).toThrow(
      'not a JSON file-tree blob',
    );
  });

  it('keeps names that are not UTF-8 as their bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), (raw) => {
        const name = rawNameOf(raw);
        expect(rawNameBytes(name)).toEqual(raw);
        const utf8 = Buffer.from(Buffer.from(raw).toString('utf8')).equals(raw);
        expect(typeof name === 'string').toBe(utf8);
      }),
    );
    expect(rawNameOf(new Uint8Array([0x66, 0xff]))).toEqual({ base64: 'Zv8=' });
  });

  it('orders names by their bytes, as a sorted directory listing', () => {
    const names = ['b', 'a', { base64: btoa('\u00ff') }, 'é', 'A'];
    const sorted = [...names].sort(compareRawNames).map((n) => Buffer.from(rawNameBytes(n)).toString('hex'));
    expect(sorted).toEqual(['41', '61', '62', 'c3a9', 'ff']);
  });

  it('splits a large directory into pages, each entry on exactly one page in order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 50, max: 5000 }),
        (count, pageBytes) => {
          const entries: FileTreeEntry[] = Array.from({ length: count }, (_, i) => ({
            name: `f${String(i).padStart(4, '0')}`,
            type: 'symlink',
            ...owner,
            target: 't'.repeat(i % 50),
          }));
          const pages = treePages(entries, pageBytes);
          expect(pages.flat()).toEqual(entries);
          expect(pages.length).toBeGreaterThanOrEqual(1);
          for (const page of pages) {
            const size = page.reduce((n, e) => n + JSON.stringify(e).length + 1, 0);
            if (page.length > 1) expect(size).toBeLessThanOrEqual(pageBytes);
          }
        },
      ),
    );
  });
});
