/**
 * The data mover's repository on moto's S3 with its data key from moto's KMS: created once
 * (format object written once, data key wrapped under the repository's encryption context),
 * reopened by another process's clients, blobs read back by ranged GETs and checked, verify,
 * and garbage collection after a snapshot is deleted, repacking mostly dead packs included.
 */
import { createHash, randomBytes } from 'node:crypto';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { KmsKeyWrapper } from '../../../shared/adapters/kms-key-wrapper.js';
import { openRepository } from '../../../shared/adapters/repository/open-repository.js';
import { S3ObjectStore } from '../../../shared/adapters/s3-object-store.js';
import { CloudRequestRefused } from '../../../shared/domain/errors.js';
import { repositoryKeys } from '../../../shared/domain/storage/keys.js';
import { awsConfig, uniqueName } from '../support/env.js';

const KiB = 1024;
const digest = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

async function bucketStore(): Promise<S3ObjectStore> {
  const client = new S3Client({ ...awsConfig(), maxAttempts: 8 });
  const bucket = uniqueName('repo');
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return new S3ObjectStore({ client, bucket, prefix: 'velero' });
}

async function kmsKey(): Promise<{ kms: KMSClient; keyArn: string }> {
  const kms = new KMSClient({ ...awsConfig(), maxAttempts: 8 });
  const key = await kms.send(new CreateKeyCommand({ Description: 'lifeboat repository test' }));
  return { kms, keyArn: key.KeyMetadata?.Arn ?? '' };
}

/** A new repository of 256 KiB packs in a new bucket, its data key wrapped by a new KMS key. */
async function newRepository() {
  const store = await bucketStore();
  const { kms, keyArn } = await kmsKey();
  const repo = await openRepository({
    store,
    keys: new KmsKeyWrapper({ client: kms, keyId: keyArn }),
    create: { packTargetBytes: 256 * KiB },
  });
  return { store, kms, keyArn, repo };
}

/** The repository opened as another process would: new S3 and KMS clients, the data key through KMS. */
function reopenElsewhere(store: S3ObjectStore, keyArn: string): ReturnType<typeof openRepository> {
  return openRepository({
    store: new S3ObjectStore({
      client: new S3Client({ ...awsConfig(), maxAttempts: 8 }),
      bucket: store.location.split('/')[2] ?? '',
      prefix: 'velero',
    }),
    keys: new KmsKeyWrapper({ client: new KMSClient({ ...awsConfig(), maxAttempts: 8 }), keyId: keyArn }),
  });
}

/** A block-mode manifest of `blocks` blocks of `blockSizeBytes`, whose block map is `map`. */
function blockManifest(id: string, map: string, blocks: number, blockSizeBytes: number) {
  return {
    kind: 'block' as const,
    id,
    createdAt: new Date().toISOString(),
    tags: { 'velero.io/backup': id },
    source: { snapshotId: `snap-${id}` },
    volumeSizeBytes: blocks * blockSizeBytes,
    blockSizeBytes,
    blockMap: [map],
    stats: { totalBytes: 0, bytesRead: 0, rawBytesStored: 0, storedBytes: 0, blobsDeduplicated: 0 },
  };
}

async function packSizes(store: S3ObjectStore): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const key of await store.list(repositoryKeys.packsDir))
    out.set(key, (await store.get(key))?.length ?? 0);
  return out;
}

const blockMap = (ids: readonly string[]): Uint8Array =>
  Buffer.from(JSON.stringify(ids.map((id, i) => [i, id])));

describe('the repository on S3 with a KMS data key', () => {
  it('creates, reopens with fresh clients, reads back, verifies and collects garbage', async () => {
    const { store, keyArn, repo } = await newRepository();
    const format = JSON.parse(Buffer.from((await store.get(repositoryKeys.format)) ?? []).toString());
    expect(format).toMatchObject({
      formatVersion: 1,
      encryption: 'AES-256-GCM',
      keyWrapping: { scheme: 'aws-kms', keyId: keyArn },
    });

    const random = Array.from({ length: 12 }, () => randomBytes(64 * KiB));
    const text = Array.from({ length: 12 }, (_, i) => Buffer.from(`line ${i} of a log file\n`.repeat(3000)));
    const writer = repo.writer();
    const keptIds: string[] = [];
    for (const b of [...random.slice(0, 6), ...text]) keptIds.push((await writer.putBlob(b)).id);
    const keptMap = await writer.putBlob(blockMap(keptIds));
    await writer.flush();
    const keptPacks = await packSizes(store);
    const goneWriter = repo.writer();
    const goneIds: string[] = [];
    for (const b of random.slice(6)) goneIds.push((await goneWriter.putBlob(b)).id);
    const goneMap = await goneWriter.putBlob(blockMap(goneIds));
    await goneWriter.flush();
    const gonePacks = [...(await packSizes(store))].filter(([key]) => !keptPacks.has(key));
    const manifest = (id: string, map: string) => blockManifest(id, map, 128, 512 * KiB);
    await repo.writeManifest(manifest('kept', keptMap.id));
    await repo.writeManifest(manifest('gone', goneMap.id));
    await writer.close();
    await goneWriter.close();
    // Compressible blobs are stored compressed, random ones as they are.
    expect(writer.stats().storedBytes).toBeLessThan(writer.stats().rawBytes);

    // Another process: new S3 and KMS clients; the data key comes back through KMS Decrypt.
    const other = await reopenElsewhere(store, keyArn);
    for (const [i, b] of [...random.slice(0, 6), ...text].entries())
      expect(digest(await other.getBlob(keptIds[i] ?? ''))).toBe(digest(b));
    expect((await other.listManifests()).map((m) => m.id).sort()).toEqual(['gone', 'kept']);
    expect(await other.verify()).toMatchObject({ blobsChecked: 26, problems: [] });

    await other.deleteManifest('gone');
    const report = await other.collectGarbage();
    expect(report.liveManifests).toBe(1);
    expect(report.packsDeleted).toBe(gonePacks.length);
    expect(report.bytesFreed).toBe(gonePacks.reduce((sum, [, bytes]) => sum + bytes, 0));
    expect([...(await packSizes(store)).keys()].sort()).toEqual([...keptPacks.keys()].sort());
    for (const [i, b] of [...random.slice(0, 6), ...text].entries())
      expect(digest(await other.getBlob(keptIds[i] ?? ''))).toBe(digest(b));
    expect(await other.verify()).toMatchObject({ problems: [] });
  });

  it('repacks mostly dead packs on S3: live blobs copied, old packs deleted, data intact', async () => {
    const { store, keyArn, repo } = await newRepository();
    // Two packs of four blobs; `kept` uses the first blob of each, `gone` all eight.
    const blobs = Array.from({ length: 8 }, () => randomBytes(64 * KiB));
    const writer = repo.writer();
    const ids: string[] = [];
    for (const b of blobs) ids.push((await writer.putBlob(b)).id);
    const goneMap = await writer.putBlob(blockMap(ids));
    await writer.flush();
    const kept = [0, 4];
    const keptMapBytes = blockMap(kept.map((i) => ids[i] ?? ''));
    const keptMap = await writer.putBlob(keptMapBytes);
    await writer.flush();
    const manifest = (id: string, map: string) => blockManifest(id, map, 8, 64 * KiB);
    await repo.writeManifest(manifest('gone', goneMap.id));
    await repo.writeManifest(manifest('kept', keptMap.id));
    await writer.close();
    const before = await packSizes(store);
    expect(before.size).toBe(4);

    await repo.deleteManifest('gone');
    const report = await repo.collectGarbage();

    const after = await packSizes(store);
    const deleted = [...before.keys()].filter((k) => !after.has(k));
    const written = [...after.keys()].filter((k) => !before.has(k));
    // Both four-blob packs and the pack of gone's block map go; one new pack holds the two copies.
    expect(deleted).toHaveLength(3);
    expect(written).toHaveLength(1);
    expect(report).toMatchObject({
      packsRepacked: 2,
      blobsCopied: 2,
      bytesCopied: after.get(written[0] ?? ''),
      packsDeleted: 3,
      bytesFreed: deleted.reduce((n, k) => n + (before.get(k) ?? 0), 0),
      problems: [],
    });
    const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
    expect(sum(after)).toBeLessThan(sum(before) / 2);
    // Another process reads everything `kept` names, and verify finds nothing wrong.
    const other = await reopenElsewhere(store, keyArn);
    const read = await other.getBlobs([...kept.map((i) => ids[i] ?? ''), keptMap.id]);
    expect(read.map(digest)).toEqual([
      ...kept.map((i) => digest(blobs[i] as Uint8Array)),
      digest(keptMapBytes),
    ]);
    expect(await other.verify()).toMatchObject({ blobsChecked: 3, problems: [] });
    expect(await other.collectGarbage()).toMatchObject({ packsRepacked: 0, blobsCopied: 0, packsDeleted: 0 });
  });

  it('refuses to open a repository whose wrapped key belongs to another (encryption context)', async () => {
    const store = await bucketStore();
    const { kms, keyArn } = await kmsKey();
    await openRepository({ store, keys: new KmsKeyWrapper({ client: kms, keyId: keyArn }) });
    // The same wrapped key under another repository id: KMS finds the context does not match.
    const format = JSON.parse(Buffer.from((await store.get(repositoryKeys.format)) ?? []).toString());
    const elsewhere = await bucketStore();
    await elsewhere.put(repositoryKeys.format, JSON.stringify({ ...format, repositoryId: 'ab'.repeat(16) }));
    const opening = openRepository({
      store: elsewhere,
      keys: new KmsKeyWrapper({ client: kms, keyId: keyArn }),
    });
    await expect(opening).rejects.toBeInstanceOf(CloudRequestRefused);
    await expect(opening).rejects.toThrow(
      /KMS Decrypt of the repository data key: InvalidCiphertextException/,
    );
  });
});
