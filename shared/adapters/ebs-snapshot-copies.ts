/**
 * SnapshotCopies over EC2 and KMS: the source account (the ambient credentials, the backup's
 * region) shares each snapshot and grants the target account use of its customer key; the copy
 * is made in the target's region through the target's role (or the ambient credentials when the
 * target is the backup's own account), so it belongs to the target account, and is followed
 * there. Clients per target are made once and kept.
 */
import {
  CopySnapshotCommand,
  DescribeSnapshotsCommand,
  EC2Client,
  ModifySnapshotAttributeCommand,
} from '@aws-sdk/client-ec2';
import { CreateGrantCommand, KMSClient, KMSServiceException } from '@aws-sdk/client-kms';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { CloudRequestRefused } from '../domain/errors.js';
import type { Tag } from '../domain/volumes/ebs-volume.js';
import type { CopyTarget } from '../domain/volumes/snapshot-copies.js';
import type { SnapshotCopies } from '../ports/snapshot-copies.js';
import type { SnapshotProgress } from '../ports/snapshotter.js';
import { awsErrorOf } from './aws-errors.js';
import { assumedRoleCredentials } from './ebs-snapshot-blocks.js';
import { EbsSnapshotter, ec2ErrorOf } from './ebs-snapshotter.js';

const KMS_RETRYABLE = new Set(['ThrottlingException', 'KMSInternalException', 'DependencyTimeoutException']);

/** What a target's copy needs of the source key (AWS: copying an encrypted snapshot across accounts). */
const GRANT_OPERATIONS = ['Decrypt', 'DescribeKey', 'CreateGrant', 'ReEncryptFrom'] as const;

export class EbsSnapshotCopies implements SnapshotCopies {
  readonly sourceRegion: string;
  private readonly ec2: EC2Client;
  private readonly kms: KMSClient;
  private readonly targets = new Map<string, { ec2: EC2Client; snapshotter: EbsSnapshotter }>();
  private readonly endpoint: string | undefined;
  private readonly credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider | undefined;

  /** `credentials`: the source account's (default: the chain's), roles are assumed from them. */
  constructor(options: {
    sourceRegion: string;
    endpoint?: string;
    credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  }) {
    this.sourceRegion = options.sourceRegion;
    this.endpoint = options.endpoint;
    this.credentials = options.credentials;
    const at = {
      region: options.sourceRegion,
      maxAttempts: 8,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    };
    this.ec2 = new EC2Client(at);
    this.kms = new KMSClient(at);
  }

  private targetOf(target: CopyTarget): { ec2: EC2Client; snapshotter: EbsSnapshotter } {
    const key = `${target.roleArn ?? ''}|${target.region}`;
    let found = this.targets.get(key);
    if (!found) {
      const credentials = target.roleArn
        ? assumedRoleCredentials({
            region: target.region,
            roleArn: target.roleArn,
            ...(target.externalId ? { externalId: target.externalId } : {}),
            ...(this.endpoint ? { endpoint: this.endpoint } : {}),
            ...(this.credentials ? { credentials: this.credentials } : {}),
          })
        : this.credentials;
      const ec2 = new EC2Client({
        region: target.region,
        maxAttempts: 8,
        ...(credentials ? { credentials } : {}),
        ...(this.endpoint ? { endpoint: this.endpoint } : {}),
      });
      found = { ec2, snapshotter: new EbsSnapshotter({ client: ec2 }) };
      this.targets.set(key, found);
    }
    return found;
  }

  async share(options: { snapshotId: string; account: string; signal?: AbortSignal }): Promise<void> {
    const { snapshotId, account, signal } = options;
    const what = `sharing snapshot ${snapshotId} with account ${account}`;
    let kmsKeyId: string | undefined;
    try {
      const seen = await this.ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [snapshotId] }), {
        abortSignal: signal,
      });
      const snapshot = seen.Snapshots?.[0];
      if (!snapshot)
        throw new CloudRequestRefused(`${what}: no such snapshot`, { code: 'InvalidSnapshot.NotFound' });
      kmsKeyId = snapshot.Encrypted ? snapshot.KmsKeyId : undefined;
      await this.ec2.send(
        new ModifySnapshotAttributeCommand({
          SnapshotId: snapshotId,
          Attribute: 'createVolumePermission',
          OperationType: 'add',
          UserIds: [account],
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      throw ec2ErrorOf(error, { what, signal });
    }
    if (!kmsKeyId) return;
    try {
      // A grant of the same name and terms is not duplicated by KMS (CreateGrant is idempotent so).
      await this.kms.send(
        new CreateGrantCommand({
          KeyId: kmsKeyId,
          GranteePrincipal: `arn:aws:iam::${account}:root`,
          Operations: [...GRANT_OPERATIONS],
          Name: `lifeboat-copy-${account}`,
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      throw awsErrorOf(error, {
        what: `granting account ${account} use of KMS key ${kmsKeyId}`,
        signal,
        service: KMSServiceException,
        retryableCodes: KMS_RETRYABLE,
      });
    }
  }

  async copy(options: {
    target: CopyTarget;
    sourceSnapshotId: string;
    tags: readonly Tag[];
    description: string;
    signal?: AbortSignal;
  }): Promise<{ snapshotId: string }> {
    const { target, signal } = options;
    const what = `CopySnapshot of ${options.sourceSnapshotId} to ${target.account ?? 'this account'} ${target.region}`;
    const there = this.targetOf(target);
    // CopySnapshot takes no client token: a copy a first attempt made is found by its tags.
    const made = await there.snapshotter.findSnapshots({ tags: options.tags, ...(signal ? { signal } : {}) });
    const found = made.find((s) => s.state !== 'error');
    if (found) return { snapshotId: found.snapshotId };
    try {
      const res = await there.ec2.send(
        new CopySnapshotCommand({
          SourceSnapshotId: options.sourceSnapshotId,
          SourceRegion: this.sourceRegion,
          Description: options.description,
          ...(target.kmsKeyId ? { Encrypted: true, KmsKeyId: target.kmsKeyId } : {}),
          TagSpecifications: [
            { ResourceType: 'snapshot', Tags: options.tags.map((t) => ({ Key: t.key, Value: t.value })) },
          ],
        }),
        { abortSignal: signal },
      );
      if (!res.SnapshotId)
        throw new CloudRequestRefused(`${what}: no snapshot id in the answer`, { code: 'Empty' });
      return { snapshotId: res.SnapshotId };
    } catch (error) {
      throw ec2ErrorOf(error, { what, signal });
    }
  }

  progress(options: {
    target: CopyTarget;
    snapshotId: string;
    signal?: AbortSignal;
  }): Promise<SnapshotProgress> {
    return this.targetOf(options.target).snapshotter.snapshotProgress(
      options.snapshotId,
      options.signal ? { signal: options.signal } : {},
    );
  }
}
