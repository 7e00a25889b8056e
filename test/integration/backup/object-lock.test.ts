/**
 * S3 Object Lock, against moto: a backup's objects written through the retaining store carry
 * its retention, and deleting the backup before the retention ends is refused with the date,
 * touching nothing; working data stays deletable.
 */
import { CreateBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { retainingBackups } from '../../../functions/common/retention.js';
import { deleteBackup } from '../../../functions/delete-backup/delete-backup.js';
import { S3ObjectStore } from '../../../shared/adapters/s3-object-store.js';
import { BackupRetained } from '../../../shared/domain/errors.js';
import { backupKeys, backupWorkKeys } from '../../../shared/domain/storage/keys.js';
import { awsConfig, uniqueName } from '../support/env.js';

describe('a bucket with S3 Object Lock', () => {
  it('retains a backup’s objects until its expiration and refuses to delete it before', async () => {
    const client = new S3Client(awsConfig());
    const bucket = uniqueName('locked');
    await client.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
    const store = new S3ObjectStore({ client, bucket });
    const name = uniqueName('kept');
    const until = new Date(Date.now() + 3_600_000);
    const retaining = retainingBackups(store, { mode: 'COMPLIANCE', until });
    const keys = backupKeys(name);
    const work = backupWorkKeys({ name, runId: 'run-1' });
    await retaining.put(keys.metadata, JSON.stringify({ apiVersion: 'velero.io/v1', kind: 'Backup' }));
    await retaining.putStream(
      keys.contents,
      (async function* () {
        yield Buffer.from('tarball');
      })(),
    );
    await retaining.put(work.request, '{}');

    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: keys.contents }));
    expect(head.ObjectLockMode).toBe('COMPLIANCE');
    expect(head.ObjectLockRetainUntilDate?.toISOString()).toBe(until.toISOString());
    expect(await store.retentionOf(work.request)).toBeUndefined();

    const refused = await deleteBackup({ name }, { store }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BackupRetained);
    expect((refused as Error).message).toContain(until.toISOString());
    expect(await store.exists(keys.metadata)).toBe(true);
    expect(await store.exists(keys.contents)).toBe(true);
    // Past the retention, the deletion goes ahead.
    const later = { now: () => new Date(until.getTime() + 1000) };
    expect(await deleteBackup({ name }, { store, clock: later })).toMatchObject({
      found: true,
      deleted: true,
    });
    expect(await store.exists(keys.metadata)).toBe(false);
  });
});
