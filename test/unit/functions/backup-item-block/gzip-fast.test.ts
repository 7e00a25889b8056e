import { promisify } from 'node:util';
import { constants, gunzipSync, gzip } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipFast } from '../../../../functions/backup-item-block/item-block.js';

const gzipOnThreadPool = promisify(gzip);

describe('gzipFast', () => {
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
      }
    }
  });
});
