import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../../../shared/domain/repository/bytes.js';
import {
  decodePackHeader,
  decodePackPrefix,
  encodePackHeader,
  encodePackPrefix,
  layoutPack,
  PACK_PREFIX_BYTES,
  PackFormatError,
  type PackRecord,
} from '../../../../../shared/domain/repository/pack.js';

const blobId = fc.uint8Array({ minLength: 32, maxLength: 32 }).map(toHex);
/** A record and the bytes it stands for (the adapter keeps them beside it). */
type TestRecord = PackRecord & { readonly sealed: Uint8Array };
const record: fc.Arbitrary<TestRecord> = fc
  .record({
    id: blobId,
    sealed: fc.uint8Array({ minLength: 0, maxLength: 300 }),
    rawLength: fc.nat({ max: 2 ** 32 - 1 }),
    compressed: fc.boolean(),
  })
  .map((r) => ({ ...r, sealedLength: r.sealed.length }));

/** A pack as the adapter builds it, with an identity "seal" of `overhead` zero bytes. */
function build(records: readonly TestRecord[], overhead: number): Uint8Array {
  const { entries, totalBytes } = layoutPack({ records, sealOverhead: overhead });
  const header = new Uint8Array([...encodePackHeader(entries), ...new Uint8Array(overhead)]);
  const parts = [encodePackPrefix(header.length), header, ...records.map((r) => r.sealed)];
  const out = new Uint8Array(totalBytes);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  expect(at).toBe(totalBytes);
  return out;
}

describe('the pack layout', () => {
  it('reads back every record and its facts from the bytes a pack is built of', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), fc.nat({ max: 64 }), (records, overhead) => {
        const pack = build(records, overhead);
        const { sealedHeaderLength, headerStart } = decodePackPrefix(pack);
        const header = pack.subarray(headerStart, headerStart + sealedHeaderLength - overhead);
        const entries = decodePackHeader({
          header,
          dataStart: PACK_PREFIX_BYTES + sealedHeaderLength,
          packBytes: pack.length,
        });
        expect(entries.map((e) => [e.id, e.rawLength, e.compressed])).toEqual(
          records.map((r) => [r.id, r.rawLength, r.compressed]),
        );
        entries.forEach((e, i) => {
          expect(pack.subarray(e.offset, e.offset + e.length)).toEqual(records[i]?.sealed);
        });
      }),
    );
  });

  it('refuses a header whose records lie outside the pack', () => {
    const records: TestRecord[] = [
      { id: 'ab'.repeat(32), sealed: new Uint8Array(10), sealedLength: 10, rawLength: 10, compressed: false },
    ];
    const pack = build(records, 0);
    const { sealedHeaderLength, headerStart } = decodePackPrefix(pack);
    const header = pack.subarray(headerStart, headerStart + sealedHeaderLength);
    expect(() =>
      decodePackHeader({ header, dataStart: headerStart + sealedHeaderLength, packBytes: pack.length - 1 }),
    ).toThrow(PackFormatError);
  });

  it('refuses bytes that are not a pack, and a header of the wrong length', () => {
    expect(() => decodePackPrefix(new TextEncoder().encode('LBIDX001\0\0\0\0'))).toThrow(PackFormatError);
    const header = encodePackHeader([
      { id: 'cd'.repeat(32), offset: 100, length: 1, rawLength: 1, compressed: true },
    ]);
    expect(() => decodePackHeader({ header: header.subarray(0, header.length - 1), dataStart: 0 })).toThrow(
      /cannot list 1 blobs/,
    );
  });
});
