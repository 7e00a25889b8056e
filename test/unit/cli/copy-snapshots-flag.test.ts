/** `backup create --copy-snapshots`: parsed into copySnapshots, its problems named by the flag. */
import { describe, expect, it } from 'vitest';
import { backupRequest, copySnapshotsFlag } from '../../../cli/backup/request.js';
import { refuseProblems } from '../../../cli/request-check.js';
import { validateBackupRequest } from '../../../shared/contracts/backup-request.js';

const ROLE = 'arn:aws:iam::210987654321:role/lifeboat-copy';
const KEY = 'arn:aws:kms:us-west-2:210987654321:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';

describe('--copy-snapshots', () => {
  it.each([
    ['a region of the backup’s own account', ':us-west-2', [{ region: 'us-west-2' }]],
    [
      'an account, region, key and role with its external id',
      `210987654321:us-west-2:${KEY}:${ROLE}#dr-ext`,
      [{ account: '210987654321', region: 'us-west-2', kmsKeyId: KEY, roleArn: ROLE, externalId: 'dr-ext' }],
    ],
    [
      'a role without a key, and a second target',
      `210987654321:us-west-2:${ROLE},:eu-west-1:alias/dr`,
      [
        { account: '210987654321', region: 'us-west-2', roleArn: ROLE },
        { region: 'eu-west-1', kmsKeyId: 'alias/dr' },
      ],
    ],
  ])('reads %s', (_, text, expected) => {
    expect(copySnapshotsFlag(text)).toEqual(expected);
  });

  it('puts the targets in the Backup request, which validation accepts', () => {
    const request = backupRequest({
      name: 'nightly',
      values: { 'copy-snapshots': `210987654321:us-west-2:${KEY}:${ROLE}` } as never,
    });
    expect(request).toMatchObject({
      backup: { spec: { copySnapshots: [{ account: '210987654321', region: 'us-west-2', roleArn: ROLE }] } },
    });
    expect(validateBackupRequest(request).ok).toBe(true);
  });

  it('refuses an entry without a region, and a bad field by the flag’s name', () => {
    expect(() => copySnapshotsFlag('210987654321')).toThrow(
      '--copy-snapshots: "210987654321" is not [ACCOUNT]:REGION[:KMS_KEY][:ROLE_ARN]',
    );
    const checked = validateBackupRequest(
      backupRequest({ name: 'nightly', values: { 'copy-snapshots': '12:us-west-2' } as never }),
    );
    expect(checked.ok).toBe(false);
    expect(() => refuseProblems(checked.ok ? [] : checked.problems)).toThrow(/--copy-snapshots/);
  });
});
