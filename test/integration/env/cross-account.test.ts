/**
 * The cross-account fixes of test/env/moto/cross_account.py, checked against moto as the launcher
 * starts it: another account's snapshot is invisible to CopySnapshot and CreateVolume until its
 * owner shares it (createVolumePermission), and one encrypted with the owner's customer key also
 * needs a KMS grant for the caller's account; with both, the copy and the volume are made in the
 * caller's own account and region. A volume of an encrypted snapshot has the snapshot's key
 * unless the request names another, as in AWS (moto gives it the account's default key).
 */
import {
  CopySnapshotCommand,
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DescribeSnapshotsCommand,
  EC2Client,
  type EC2ClientConfig,
  EC2ServiceException,
  ModifySnapshotAttributeCommand,
} from '@aws-sdk/client-ec2';
import { CreateGrantCommand, CreateKeyCommand, KMSClient, type KMSClientConfig } from '@aws-sdk/client-kms';
import { describe, expect, it } from 'vitest';
import { assumedRoleCredentials } from '../../../shared/adapters/ebs-snapshot-blocks.js';
import { awsConfig, testEnv } from '../support/env.js';

const SOURCE_REGION = 'us-east-1';
const DR_REGION = 'us-west-2';

/** Clients of the DR account (through its role) in a region. */
function drConfig(region: string): EC2ClientConfig & KMSClientConfig {
  const env = testEnv();
  return {
    region,
    endpoint: env.aws.endpoint,
    credentials: assumedRoleCredentials({
      region,
      endpoint: env.aws.endpoint,
      credentials: awsConfig().credentials,
      roleArn: `arn:aws:iam::${env.aws.accounts.dr}:role/lifeboat-restore`,
      externalId: 'lifeboat-shim-test',
    }),
  };
}

/** A completed snapshot of a new source-account volume, encrypted with `kmsKeyId` when given. */
async function sourceSnapshot(kmsKeyId?: string): Promise<string> {
  const ec2 = new EC2Client(awsConfig({ region: SOURCE_REGION }));
  const volume = await ec2.send(
    new CreateVolumeCommand({
      AvailabilityZone: `${SOURCE_REGION}a`,
      Size: 1,
      VolumeType: 'gp3',
      ...(kmsKeyId ? { Encrypted: true, KmsKeyId: kmsKeyId } : {}),
    }),
  );
  const snapshot = await ec2.send(new CreateSnapshotCommand({ VolumeId: volume.VolumeId }));
  return snapshot.SnapshotId ?? '';
}

async function share(snapshotId: string): Promise<void> {
  await new EC2Client(awsConfig({ region: SOURCE_REGION })).send(
    new ModifySnapshotAttributeCommand({
      SnapshotId: snapshotId,
      Attribute: 'createVolumePermission',
      OperationType: 'add',
      UserIds: [testEnv().aws.accounts.dr],
    }),
  );
}

const codeOf = async (request: Promise<unknown>): Promise<string> =>
  request.then(
    () => 'no error',
    (e: unknown) => (e instanceof EC2ServiceException ? e.name : String(e)),
  );

describe('snapshots shared across accounts in the emulator', () => {
  it('refuses a copy and a volume of an unshared snapshot, and allows both once it is shared', async () => {
    // Prepare
    const snapshotId = await sourceSnapshot();
    const drWest = new EC2Client(drConfig(DR_REGION));
    const drEast = new EC2Client(drConfig(SOURCE_REGION));
    const copy = (): Promise<unknown> =>
      drWest.send(new CopySnapshotCommand({ SourceSnapshotId: snapshotId, SourceRegion: SOURCE_REGION }));
    const volume = (): Promise<unknown> =>
      drEast.send(new CreateVolumeCommand({ SnapshotId: snapshotId, AvailabilityZone: `${SOURCE_REGION}a` }));

    // Act, Assess: refused without the share
    expect(await codeOf(copy())).toBe('InvalidSnapshot.NotFound');
    expect(await codeOf(volume())).toBe('InvalidSnapshot.NotFound');

    // Act, Assess: allowed with it, the copy in the DR account and region
    await share(snapshotId);
    const copied = (await copy()) as { SnapshotId?: string };
    const seen = await drWest.send(new DescribeSnapshotsCommand({ SnapshotIds: [copied.SnapshotId ?? ''] }));
    expect(seen.Snapshots?.[0]).toMatchObject({ OwnerId: testEnv().aws.accounts.dr, State: 'completed' });
    const made = (await volume()) as { VolumeId?: string; SnapshotId?: string };
    expect(made.VolumeId).toMatch(/^vol-/);
    expect(made.SnapshotId).toBe(snapshotId);
  });

  it('refuses a copy of a shared snapshot under the owner key without a grant, and re-encrypts with one', async () => {
    // Prepare: the source's key, a shared snapshot under it, the DR account's own key
    const env = testEnv();
    const sourceKms = new KMSClient(awsConfig({ region: SOURCE_REGION }));
    const sourceKey = (await sourceKms.send(new CreateKeyCommand({ Description: 'source volumes' })))
      .KeyMetadata;
    const snapshotId = await sourceSnapshot(sourceKey?.Arn);
    await share(snapshotId);
    const drKey = (await new KMSClient(drConfig(DR_REGION)).send(new CreateKeyCommand({ Description: 'dr' })))
      .KeyMetadata;
    const drWest = new EC2Client(drConfig(DR_REGION));
    const copy = (): Promise<unknown> =>
      drWest.send(
        new CopySnapshotCommand({
          SourceSnapshotId: snapshotId,
          SourceRegion: SOURCE_REGION,
          Encrypted: true,
          KmsKeyId: drKey?.Arn,
        }),
      );

    // Act, Assess: refused without a grant, and with a grant to some other account
    expect(await codeOf(copy())).toBe('UnauthorizedOperation');
    await sourceKms.send(
      new CreateGrantCommand({
        KeyId: sourceKey?.KeyId,
        GranteePrincipal: 'arn:aws:iam::444455556666:root',
        Operations: ['Decrypt'],
      }),
    );
    expect(await codeOf(copy())).toBe('UnauthorizedOperation');

    // Act, Assess: a grant for the DR account lets it copy, re-encrypted with its own key
    await sourceKms.send(
      new CreateGrantCommand({
        KeyId: sourceKey?.KeyId,
        GranteePrincipal: `arn:aws:iam::${env.aws.accounts.dr}:root`,
        Operations: ['Decrypt', 'DescribeKey', 'CreateGrant', 'ReEncryptFrom'],
      }),
    );
    const copied = (await copy()) as { SnapshotId?: string };
    const seen = await drWest.send(new DescribeSnapshotsCommand({ SnapshotIds: [copied.SnapshotId ?? ''] }));
    expect(seen.Snapshots?.[0]).toMatchObject({
      OwnerId: env.aws.accounts.dr,
      Encrypted: true,
      KmsKeyId: drKey?.Arn,
    });

    // Act, Assess: as in AWS, a volume of the copy, no key named, has the copy's key (moto: the default)
    const volume = await drWest.send(
      new CreateVolumeCommand({ AvailabilityZone: `${DR_REGION}a`, SnapshotId: copied.SnapshotId }),
    );
    expect(volume).toMatchObject({ Encrypted: true, KmsKeyId: drKey?.Arn });
  });

  it("leaves an account's own snapshots as moto has them", async () => {
    const snapshotId = await sourceSnapshot();
    const west = new EC2Client(awsConfig({ region: DR_REGION }));
    const copied = await west.send(
      new CopySnapshotCommand({ SourceSnapshotId: snapshotId, SourceRegion: SOURCE_REGION }),
    );
    expect(copied.SnapshotId).toMatch(/^snap-/);
  });
});
