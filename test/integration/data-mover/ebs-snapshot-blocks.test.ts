/**
 * The EBS direct API adapter's retries on a real network path: a small HTTP proxy in front of moto
 * spoils some GetSnapshotBlock answers the way a network or a throttled service does (a body cut
 * off, a byte flipped under its checksum, throttling), and the adapter still returns the block
 * intact; a refusal that repeating cannot fix is not repeated.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EBSClient } from '@aws-sdk/client-ebs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EbsSnapshotBlocks } from '../../../shared/adapters/ebs-snapshot-blocks.js';
import { CloudRequestRefused, RetryableError } from '../../../shared/domain/errors.js';
import { EBS_BLOCK_SIZE } from '../../../shared/ports/snapshot-blocks.js';
import { awsConfig } from '../support/env.js';

type Spoil = 'cut' | 'flip' | 'throttle';

/** Forwards to moto; the next GetSnapshotBlock answers are spoiled as queued. */
class SpoilingProxy {
  readonly queue: Spoil[] = [];
  blockReads = 0;
  private server: Server | undefined;

  async start(upstream: string): Promise<string> {
    const target = new URL(upstream);
    const server = createServer((req, res) => {
      const isBlockRead = req.method === 'GET' && /^\/snapshots\/[^/]+\/blocks\/\d+/.test(req.url ?? '');
      const spoil = isBlockRead ? this.queue.shift() : undefined;
      if (isBlockRead) this.blockReads++;
      if (spoil === 'throttle') {
        res.writeHead(400, {
          'content-type': 'application/json',
          'x-amzn-errortype': 'RequestThrottledException',
        });
        res.end(JSON.stringify({ message: 'Rate exceeded' }));
        return;
      }
      const forward = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
        },
        (up) => {
          const parts: Buffer[] = [];
          up.on('data', (c: Buffer) => parts.push(c));
          up.on('end', () => {
            const body = Buffer.concat(parts);
            res.writeHead(up.statusCode ?? 502, up.headers);
            if (spoil === 'cut') {
              res.write(body.subarray(0, body.length >> 1), () => res.socket?.destroy());
              return;
            }
            if (spoil === 'flip' && body.length > 0) {
              const at = body.length >> 1;
              body[at] = (body[at] ?? 0) ^ 0xff;
            }
            res.end(body);
          });
        },
      );
      req.pipe(forward);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('EBS direct API adapter on a spoiled network path', () => {
  const proxy = new SpoilingProxy();
  let blocks: EbsSnapshotBlocks;
  let snapshotId: string;
  let token: string;
  const data = randomBytes(EBS_BLOCK_SIZE);

  beforeAll(async () => {
    const config = awsConfig();
    const endpoint = await proxy.start(config.endpoint);
    blocks = new EbsSnapshotBlocks({
      client: new EBSClient({ ...config, endpoint, maxAttempts: 2 }),
      retryDelaysMs: [10, 10, 10, 10],
    });
    const started = await blocks.startSnapshot({ volumeSizeGiB: 1 });
    snapshotId = started.snapshotId;
    await blocks.putSnapshotBlock({ snapshotId, blockIndex: 3, data });
    expect(await blocks.completeSnapshot({ snapshotId, changedBlocksCount: 1 })).toBe('completed');
    for await (const page of blocks.listSnapshotBlocks({ snapshotId }))
      for (const b of page.blocks) if (b.index === 3) token = b.token;
  });

  afterAll(async () => {
    await proxy.stop();
  });

  const read = async () =>
    (await blocks.getSnapshotBlock({ snapshotId, blockIndex: 3, blockToken: token })).data;
  const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

  it.each<[string, Spoil[]]>([
    ['a body cut off midway', ['cut']],
    ['a flipped byte under its checksum', ['flip', 'flip']],
    ['throttling past the SDK’s own retries', ['throttle', 'throttle', 'throttle']],
  ])('reads the block intact after %s', async (_, spoils) => {
    proxy.queue.push(...spoils);
    const before = proxy.blockReads;
    expect(sha(await read())).toBe(sha(data));
    expect(proxy.queue).toEqual([]);
    expect(proxy.blockReads - before).toBe(spoils.length + 1);
  });

  it('gives up with RetryableError when the spoiling outlasts its retries', async () => {
    proxy.queue.push(...Array.from({ length: 5 }, (): Spoil => 'flip'));
    await expect(read()).rejects.toBeInstanceOf(RetryableError);
    proxy.queue.length = 0;
  });

  it('does not repeat a refusal: a block without data', async () => {
    const before = proxy.blockReads;
    const refused = blocks.getSnapshotBlock({ snapshotId, blockIndex: 4, blockToken: token });
    await expect(refused).rejects.toBeInstanceOf(CloudRequestRefused);
    await expect(refused).rejects.toMatchObject({ code: 'ValidationException' });
    expect(proxy.blockReads - before).toBe(1);
  });
});
