/**
 * The data mover's S3 client keeps its connections alive: requests one after another reuse one
 * connection, and requests at once open no more connections than run at once. Counted by a proxy
 * in front of moto that keeps clients' connections open as S3 does (moto itself closes every
 * one), with the store the data-mover task builds (objectStoreAt).
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectStoreAt } from '../../../shared/adapters/data-mover-adapters.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { FaultProxy } from '../../env/fault-proxy.js';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';

describe('the data mover S3 store', () => {
  let proxy: FaultProxy;
  let store: ObjectStore;
  const saved = { ...process.env };

  beforeAll(async () => {
    const bucket = uniqueName('keep-alive');
    await new S3Client(awsConfig()).send(new CreateBucketCommand({ Bucket: bucket }));
    proxy = await FaultProxy.forHttp(testEnv().aws.endpoint, { keepAlive: true });
    // As the task is configured: the endpoint and credentials from the standard variables.
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: proxy.url,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
    });
    store = objectStoreAt({ bucket, region: testEnv().aws.region, forcePathStyle: true });
  });
  afterAll(async () => {
    process.env = saved;
    await proxy.close();
  });

  it('reuses one connection for requests one after another, and opens one per request at once', async () => {
    // Act: 30 puts and 30 ranged reads in turn, then 8 reads at once.
    for (let i = 0; i < 30; i++) await store.put(`k/${i}`, `object ${i}`);
    for (let i = 0; i < 30; i++) await store.getRange?.(`k/${i}`, { offset: 0, length: 6 });
    const sequential = proxy.counts.opened;
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.getRange?.(`k/${i}`, { offset: 0, length: 6 })),
    );

    // Assess
    expect(proxy.counts.forwarded).toBeGreaterThanOrEqual(68);
    expect(sequential).toBe(1);
    expect(proxy.counts.opened).toBeLessThanOrEqual(8);
  });
});
