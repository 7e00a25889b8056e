import { describe, expect, it } from 'vitest';
import { validateBackupRequest } from '../../../../shared/contracts/backup-request.js';

const DR = '210987654321';
const ROLE = `arn:aws:iam::${DR}:role/lifeboat-dr`;
const KEY = `arn:aws:kms:us-west-2:${DR}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;

const request = (copySnapshots: unknown) => ({
  cluster: 'prod',
  backup: { metadata: { name: 'nightly' }, spec: { copySnapshots } },
});

const problemsOf = (copySnapshots: unknown) => {
  const result = validateBackupRequest(request(copySnapshots));
  return result.ok ? [] : result.problems;
};

describe('the copySnapshots backup option', () => {
  it('accepts a copy to another account and region through its role, with its key, and one to a region', () => {
    const targets = [
      { account: DR, region: 'us-west-2', kmsKeyId: KEY, roleArn: ROLE, externalId: 'lifeboat-dr' },
      { region: 'eu-west-1', kmsKeyId: 'alias/dr' },
    ];
    const result = validateBackupRequest(request(targets));
    expect(result.ok && result.value.backup.spec.copySnapshots).toEqual(targets);
  });

  it.each<[string, unknown, { path: string; message: string }[]]>([
    [
      'a bad account, region and key, by field path',
      [{ account: '12', region: 'west', kmsKeyId: 'k' }],
      [
        { path: 'backup.spec.copySnapshots[0].account', message: 'must be a 12-digit AWS account id' },
        {
          path: 'backup.spec.copySnapshots[0].region',
          message: 'must be an AWS region name, such as us-west-2',
        },
        {
          path: 'backup.spec.copySnapshots[0].kmsKeyId',
          message: 'must be a KMS key id, key ARN, alias name (alias/...) or alias ARN',
        },
      ],
    ],
    [
      'another account without the role the copies are made through',
      [{ account: DR, region: 'us-west-2' }],
      [
        {
          path: 'backup.spec.copySnapshots[0].roleArn',
          message: `is required with account: the role in account ${DR} the copies are made through`,
        },
      ],
    ],
    [
      'a role and a key of other accounts and regions than the target',
      [
        {
          account: DR,
          region: 'eu-west-1',
          roleArn: 'arn:aws:iam::111122223333:role/r',
          kmsKeyId: KEY.replace(DR, '111122223333'),
        },
      ],
      [
        {
          path: 'backup.spec.copySnapshots[0].roleArn',
          message: `is a role of account 111122223333, not of account ${DR}`,
        },
        {
          path: 'backup.spec.copySnapshots[0].kmsKeyId',
          message: 'is a key of us-west-2, not of region eu-west-1',
        },
        {
          path: 'backup.spec.copySnapshots[0].kmsKeyId',
          message: `is a key of account 111122223333, not of account ${DR}`,
        },
      ],
    ],
    [
      'the same account and region twice, and an external id without a role',
      [{ region: 'us-west-2' }, { region: 'us-west-2', externalId: 'x1' }],
      [
        { path: 'backup.spec.copySnapshots[1].externalId', message: 'needs roleArn' },
        {
          path: 'backup.spec.copySnapshots[1]',
          message: "names the backup's account and region us-west-2 twice",
        },
      ],
    ],
    [
      'an unknown field',
      [{ region: 'us-west-2', bucket: 'b' }],
      [{ path: 'backup.spec.copySnapshots[0]', message: expect.stringContaining('bucket') }],
    ],
  ])('refuses %s', (_, targets, expected) => {
    expect(problemsOf(targets)).toEqual(expected);
  });

  it('refuses more than five targets', () => {
    const targets = Array.from({ length: 6 }, (_, i) => ({ region: `us-west-${i + 1}` }));
    expect(problemsOf(targets)).toEqual([
      { path: 'backup.spec.copySnapshots', message: expect.stringContaining('5') },
    ]);
  });
});
