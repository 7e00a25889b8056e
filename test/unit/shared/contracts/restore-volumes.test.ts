import { describe, expect, it } from 'vitest';
import { validateRestoreRequest } from '../../../../shared/contracts/restore-request.js';
import { backupVolumeInfos } from '../../../../shared/contracts/restore-volumes.js';

const request = (spec: Record<string, unknown>) => ({
  cluster: 'dr',
  restore: { metadata: { name: 'restore-1' }, spec: { backupName: 'nightly', ...spec } },
});

describe('volumeAvailabilityZone (Lifeboat) in a restore request', () => {
  it.each(['us-east-1a', 'eu-central-2c', 'us-west-2-lax-1a', 'ap-southeast-4b'])('accepts %s', (zone) => {
    expect(validateRestoreRequest(request({ volumeAvailabilityZone: zone })).ok).toBe(true);
  });

  it.each(['us-east-1', 'US-EAST-1A', 'use1-az1', '', 'us-east-1a; rm -rf'])(
    'refuses %j by its field path',
    (zone) => {
      const result = validateRestoreRequest(request({ volumeAvailabilityZone: zone }));
      expect(result.ok).toBe(false);
      expect(result.ok ? [] : result.problems).toEqual([
        {
          path: 'restore.spec.volumeAvailabilityZone',
          message: 'must be an availability zone name, such as us-east-1a',
        },
      ]);
    },
  );
});

describe('volumeKmsKeyId (Lifeboat) in a restore request', () => {
  it.each([
    '1234abcd-12ab-34cd-56ef-1234567890ab',
    'mrk-1234abcd12ab34cd56ef1234567890ab',
    'alias/ebs-restores',
    'alias/aws/ebs',
    'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    'arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab',
    'arn:aws:kms:eu-central-1:123456789012:alias/ebs-restores',
  ])('accepts %s', (key) => {
    expect(validateRestoreRequest(request({ volumeKmsKeyId: key })).ok).toBe(true);
  });

  it.each([
    '',
    'ebs-restores',
    '1234ABCD-12AB-34CD-56EF-1234567890AB',
    'arn:aws:kms:us-east-1:12345:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    'arn:aws:s3:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    'alias/',
    'alias/x y',
  ])('refuses %j by its field path', (key) => {
    const result = validateRestoreRequest(request({ volumeKmsKeyId: key }));
    expect(result.ok ? [] : result.problems).toEqual([
      {
        path: 'restore.spec.volumeKmsKeyId',
        message: 'must be a KMS key id, key ARN, alias name (alias/...) or alias ARN',
      },
    ]);
  });

  it('refuses a key that is not a string', () => {
    const result = validateRestoreRequest(request({ volumeKmsKeyId: 42 }));
    expect(result.ok ? [] : result.problems.map((p) => p.path)).toEqual(['restore.spec.volumeKmsKeyId']);
  });
});

describe("a backup's volumes-info as a restore reads it", () => {
  it('reads what Velero writes, keys and all', () => {
    const velero = [
      {
        pvcName: 'db',
        pvcNamespace: 'shop',
        pvName: 'pvc-1',
        backupMethod: 'CSISnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        startTimestamp: '2026-01-01T00:00:00Z',
        result: 'succeeded',
        csiSnapshotInfo: {
          snapshotHandle: 'snap-1',
          size: 1073741824,
          driver: 'ebs.csi.aws.com',
          vscName: 'snapcontent-1',
          operationID: '',
          ReadyToUse: true,
        },
        pvInfo: { reclaimPolicy: 'Delete', labels: { a: 'b' } },
      },
      {
        pvName: 'pv-2',
        backupMethod: 'NativeSnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        nativeSnapshotInfo: {
          snapshotHandle: 'snap-2',
          volumeType: 'gp3',
          volumeAZ: 'us-east-1a',
          iops: '',
          Phase: 'Completed',
        },
      },
    ];
    expect(backupVolumeInfos.parse(velero)).toEqual([
      {
        pvcName: 'db',
        pvcNamespace: 'shop',
        pvName: 'pvc-1',
        backupMethod: 'CSISnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        csiSnapshotInfo: {
          snapshotHandle: 'snap-1',
          size: 1073741824,
          driver: 'ebs.csi.aws.com',
          vscName: 'snapcontent-1',
          operationID: '',
          ReadyToUse: true,
        },
        pvInfo: { reclaimPolicy: 'Delete', labels: { a: 'b' } },
      },
      {
        pvName: 'pv-2',
        backupMethod: 'NativeSnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        nativeSnapshotInfo: {
          snapshotHandle: 'snap-2',
          volumeType: 'gp3',
          volumeAZ: 'us-east-1a',
          iops: '',
          Phase: 'Completed',
        },
      },
    ]);
  });

  it('reads a field of the wrong type as its zero value and an unknown method as none, as Go would', () => {
    const [info] = backupVolumeInfos.parse([
      { pvName: 'pv', backupMethod: 'SomethingNew', skipped: 'yes', nativeSnapshotInfo: { iops: 3000 } },
    ]);
    expect(info).toEqual({
      pvName: 'pv',
      snapshotDataMoved: false,
      preserveLocalSnapshot: false,
      skipped: false,
      nativeSnapshotInfo: { snapshotHandle: '', volumeType: '', volumeAZ: '', iops: '3000', Phase: '' },
    });
  });
});

describe('volumeRegion and volumeAccountRoleArn (Lifeboat) in a restore request', () => {
  const role = 'arn:aws:iam::210987654321:role/lifeboat-restore';
  const problems = (spec: Record<string, unknown>) => {
    const result = validateRestoreRequest(request(spec));
    return result.ok ? [] : result.problems;
  };

  it('accepts another region with a zone of it, a key of it, and another account’s role with its external id', () => {
    expect(
      problems({
        volumeRegion: 'us-west-2',
        volumeAvailabilityZone: 'us-west-2b',
        volumeKmsKeyId: 'arn:aws:kms:us-west-2:210987654321:key/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
        volumeAccountRoleArn: role,
        volumeAccountExternalId: 'lifeboat-dr',
      }),
    ).toEqual([]);
    expect(problems({ volumeRegion: 'us-west-2', volumeAvailabilityZone: 'us-west-2-lax-1a' })).toEqual([]);
  });

  it.each([
    [
      'a region without a zone',
      { volumeRegion: 'us-west-2' },
      'restore.spec.volumeAvailabilityZone',
      'is required with volumeRegion: the zone of us-west-2 the volumes are created in',
    ],
    [
      'a zone of another region',
      { volumeRegion: 'us-west-2', volumeAvailabilityZone: 'us-east-1a' },
      'restore.spec.volumeAvailabilityZone',
      'must be a zone of volumeRegion us-west-2',
    ],
    [
      'a Local Zone of another region',
      { volumeRegion: 'us-west-2', volumeAvailabilityZone: 'us-east-1-bos-1a' },
      'restore.spec.volumeAvailabilityZone',
      'must be a zone of volumeRegion us-west-2',
    ],
    [
      'a key of another region',
      {
        volumeRegion: 'us-west-2',
        volumeAvailabilityZone: 'us-west-2a',
        volumeKmsKeyId: 'arn:aws:kms:us-east-1:210987654321:key/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
      },
      'restore.spec.volumeKmsKeyId',
      'is a key of us-east-1, not of volumeRegion us-west-2',
    ],
    [
      'a region that is none',
      { volumeRegion: 'west' },
      'restore.spec.volumeRegion',
      'must be an AWS region name, such as us-west-2',
    ],
    [
      'a role that is no role ARN',
      { volumeAccountRoleArn: 'arn:aws:iam::1234:user/x' },
      'restore.spec.volumeAccountRoleArn',
      'must be an IAM role ARN, such as arn:aws:iam::123456789012:role/lifeboat-restore',
    ],
    [
      'an external id without a role',
      { volumeAccountExternalId: 'lifeboat-dr' },
      'restore.spec.volumeAccountExternalId',
      'needs volumeAccountRoleArn',
    ],
  ])('refuses %s, by field path', (_, spec, path, message) => {
    expect(problems(spec)).toEqual([{ path, message }]);
  });
});
