import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { constants, gunzipSync, gzip } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gunzipFast, gzipFast } from '../../../../functions/common/gzip.js';

const gzipOnThreadPool = promisify(gzip);

describe('gzipFast and gunzipFast', () => {
  it('writes the bytes of level 1 gzip on the thread pool, for data compressed inline or not', async () => {
    const json = (n: number): string =>
      JSON.stringify({ items: 'é{"kind":"ConfigMap"}'.repeat(n) }).slice(0, n);
    for (const size of [0, 30_000, (1 << 20) - 1, 1 << 20, 1_500_000]) {
      const text = json(size);
      const bytes = Buffer.from(text);
      for (const data of [text, bytes]) {
        const ours = await gzipFast(data);
        expect(ours.equals(await gzipOnThreadPool(data, { level: constants.Z_BEST_SPEED }))).toBe(true);
        expect(gunzipSync(ours).equals(bytes)).toBe(true);
        expect((await gunzipFast(ours)).equals(bytes)).toBe(true);
      }
    }
  });

  it('gunzipFast reads gzip of any level, from the event loop or the thread pool, and refuses what is not gzip', async () => {
    // Random bytes do not compress: their gzip is above the inline limit.
    const large = randomBytes(1_200_000);
    for (const data of [Buffer.from('{"kind":"ConfigMap"}'.repeat(100)), large]) {
      const packed = await promisify(gzip)(data, { level: 9 });
      expect(packed.byteLength > 128 * 1024).toBe(data === large);
      expect((await gunzipFast(packed)).equals(data)).toBe(true);
    }
    await expect(gunzipFast(Buffer.from('not gzip'))).rejects.toThrow(/header/);
    await expect(gunzipFast(Buffer.alloc(200_000, 1))).rejects.toThrow(/header/);
  });
});
