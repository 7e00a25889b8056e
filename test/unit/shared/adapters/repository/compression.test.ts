import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  compressBlob,
  decompressBlob,
  RepositoryCrypto,
} from '../../../../../shared/adapters/repository/repository-crypto.js';

const KiB = 1024;

/** Text of `length` bytes: words in a fixed order, as logs and configuration files are. */
function text(length: number): Buffer {
  const words = 'backup volume restore snapshot cluster namespace pod service config "level":"info"';
  return Buffer.from(words.repeat(Math.ceil(length / words.length)).slice(0, length));
}

/** Bytes as random as a cipher's output, the same on every run. */
function random(length: number, seed: number): Buffer {
  const key = Buffer.alloc(32, seed);
  return createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(length));
}

describe('blob compression', () => {
  it.each([256, 3 * KiB, 12 * KiB, 12 * KiB + 1, 64 * KiB + 1, 1024 * KiB])(
    'stores %i random bytes as they are',
    async (length) => {
      const data = random(length, length % 251);
      const { bytes, compressed } = await compressBlob(data);
      expect(compressed).toBe(false);
      expect(Buffer.from(bytes).equals(data)).toBe(true);
    },
  );

  it.each([256, 3 * KiB, 40 * KiB, 64 * KiB + 1, 1024 * KiB])(
    'deflates %i bytes of text and inflates them back exactly',
    async (length) => {
      const data = text(length);
      const { bytes, compressed } = await compressBlob(data);
      expect(compressed).toBe(true);
      expect(bytes.length).toBeLessThan(length / 2);
      const back = await decompressBlob({ bytes, compressed, rawLength: length });
      expect(Buffer.from(back).equals(data)).toBe(true);
    },
  );

  it('deflates a blob whose samples are text even when random bytes lie between them', async () => {
    // Start, middle and end are text: the samples decide, as a deflated sample decided before.
    const data = Buffer.concat([
      text(8 * KiB),
      random(8 * KiB, 3),
      text(8 * KiB),
      random(8 * KiB, 4),
      text(8 * KiB),
    ]);
    const { compressed } = await compressBlob(data);
    expect(compressed).toBe(true);
  });

  it('leaves blobs under 256 bytes as they are', async () => {
    const data = text(255);
    const { bytes, compressed } = await compressBlob(data);
    expect(compressed).toBe(false);
    expect(bytes).toBe(data);
  });

  it('refuses a record that inflates past its recorded length', async () => {
    const data = text(100 * KiB);
    const { bytes } = await compressBlob(data);
    await expect(decompressBlob({ bytes, compressed: true, rawLength: 50 * KiB })).rejects.toThrow();
  });

  it('tells random bytes from text at every size it samples', async () => {
    for (const length of [300, 1000, 5000, 20_000]) {
      expect((await compressBlob(randomBytes(length))).compressed).toBe(false);
      expect((await compressBlob(text(length))).compressed).toBe(true);
    }
  });
});

describe('record sealing', () => {
  it('gives every record its own nonce, across many draws of random bytes, and opens each', () => {
    const crypto = new RepositoryCrypto({ dataKey: Buffer.alloc(32, 7), repositoryId: 'ab'.repeat(16) });
    const aad = Buffer.from('blob');
    const nonces = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const plaintext = Buffer.from(`record ${i}`);
      const sealed = crypto.seal(plaintext, aad);
      nonces.add(Buffer.from(sealed.subarray(0, 12)).toString('hex'));
      expect(Buffer.from(crypto.open(sealed, aad)).equals(plaintext)).toBe(true);
    }
    expect(nonces.size).toBe(3000);
  });
});
