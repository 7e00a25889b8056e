import { createHash } from 'node:crypto';
import {
  CompleteSnapshotCommand,
  EBSClient,
  GetSnapshotBlockCommand,
  ListSnapshotBlocksCommand,
  PutSnapshotBlockCommand,
  StartSnapshotCommand,
} from '@aws-sdk/client-ebs';
import {
  CopySnapshotCommand,
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DescribeSecurityGroupsCommand,
  DescribeSnapshotsCommand,
  DescribeSubnetsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import {
  CreateClusterCommand,
  DescribeTasksCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
} from '@aws-sdk/client-ecs';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { describe, expect, it } from 'vitest';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

const MiB = 1024 * 1024;

describe('S3 in the emulator', () => {
  it('puts, gets and lists objects', async () => {
    const s3 = new S3Client(awsConfig());
    const Bucket = uniqueName('smoke');
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'backups/a/velero-backup.json', Body: '{"a":1}' }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'backups/b/velero-backup.json', Body: '{"b":2}' }));
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'backups/a/velero-backup.json' }));
    expect(await got.Body?.transformToString()).toBe('{"a":1}');
    const listed = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'backups/', Delimiter: '/' }));
    expect(listed.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['backups/a/', 'backups/b/']);
  });

  it('assembles a multipart upload from its parts', async () => {
    const s3 = new S3Client(awsConfig());
    const Bucket = uniqueName('smoke');
    await s3.send(new CreateBucketCommand({ Bucket }));
    const first = Buffer.alloc(5 * MiB, 'a');
    const second = Buffer.from('tail of the object');
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'big' }));
    const p1 = await s3.send(
      new UploadPartCommand({ Bucket, Key: 'big', UploadId, PartNumber: 1, Body: first }),
    );
    const p2 = await s3.send(
      new UploadPartCommand({ Bucket, Key: 'big', UploadId, PartNumber: 2, Body: second }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key: 'big',
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: p1.ETag },
            { PartNumber: 2, ETag: p2.ETag },
          ],
        },
      }),
    );
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'big' }));
    const body = Buffer.from((await got.Body?.transformToByteArray()) ?? []);
    expect(body.length).toBe(first.length + second.length);
    expect(body.subarray(first.length).toString()).toBe('tail of the object');
  });

  it('refuses a conditional put over an existing key with 412', async () => {
    const s3 = new S3Client(awsConfig());
    const Bucket = uniqueName('smoke');
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'once', Body: 'first', IfNoneMatch: '*' }));
    const second = s3.send(new PutObjectCommand({ Bucket, Key: 'once', Body: 'second', IfNoneMatch: '*' }));
    await expect(second).rejects.toSatisfy(
      (e: unknown) => e instanceof S3ServiceException && e.$metadata.httpStatusCode === 412,
    );
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'once' }));
    expect(await got.Body?.transformToString()).toBe('first');
  });
});

describe('SQS in the emulator', () => {
  it('sends, receives and deletes messages in batches', async () => {
    const sqs = new SQSClient(awsConfig());
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('smoke') }));
    const bodies = Array.from({ length: 10 }, (_, i) => `block-${i}`);
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: bodies.map((MessageBody, i) => ({ Id: `m${i}`, MessageBody })),
      }),
    );
    expect(sent.Successful).toHaveLength(10);
    const received: { body: string; handle: string }[] = [];
    while (received.length < 10) {
      const batch = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      for (const m of batch.Messages ?? [])
        received.push({ body: m.Body ?? '', handle: m.ReceiptHandle ?? '' });
    }
    expect(received.map((m) => m.body).sort()).toEqual([...bodies].sort());
    const deleted = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl,
        Entries: received.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.handle })),
      }),
    );
    expect(deleted.Successful).toHaveLength(10);
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(attributes.Attributes?.ApproximateNumberOfMessages).toBe('0');
    expect(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible).toBe('0');
  });

  it('moves a message to the dead-letter queue after maxReceiveCount receives', async () => {
    const sqs = new SQSClient(awsConfig());
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('smoke-dlq') }));
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn;
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: uniqueName('smoke-src'),
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }) },
      }),
    );
    await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: [{ Id: 'p', MessageBody: 'poison' }] }));
    // Receive without deleting, making the message visible again at once, until it is moved.
    for (let i = 0; i < 2; i++) {
      const r = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 0, WaitTimeSeconds: 1 }),
      );
      expect(r.Messages?.[0]?.Body).toBe('poison');
    }
    const afterLimit = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 0, WaitTimeSeconds: 1 }),
    );
    expect(afterLimit.Messages ?? []).toHaveLength(0);
    const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq.QueueUrl, WaitTimeSeconds: 1 }));
    expect(dead.Messages?.[0]?.Body).toBe('poison');
  });
});

describe('EC2 volumes and snapshots in the emulator', () => {
  it('snapshots a volume and copies the snapshot to another region', async () => {
    const ec2 = new EC2Client(awsConfig());
    const volume = await ec2.send(
      new CreateVolumeCommand({ AvailabilityZone: 'us-east-1a', Size: 8, VolumeType: 'gp3' }),
    );
    const snapshot = await ec2.send(
      new CreateSnapshotCommand({
        VolumeId: volume.VolumeId,
        Description: 'smoke',
        TagSpecifications: [
          { ResourceType: 'snapshot', Tags: [{ Key: 'velero.io/backup', Value: 'smoke' }] },
        ],
      }),
    );
    const described = await ec2.send(
      new DescribeSnapshotsCommand({ SnapshotIds: [snapshot.SnapshotId ?? ''] }),
    );
    expect(described.Snapshots?.[0]?.VolumeId).toBe(volume.VolumeId);
    expect(described.Snapshots?.[0]?.Tags).toContainEqual({ Key: 'velero.io/backup', Value: 'smoke' });

    const west = new EC2Client(awsConfig({ region: 'us-west-2' }));
    const copy = await west.send(
      new CopySnapshotCommand({
        SourceRegion: 'us-east-1',
        SourceSnapshotId: snapshot.SnapshotId,
        Description: 'dr copy',
      }),
    );
    const copied = await west.send(new DescribeSnapshotsCommand({ SnapshotIds: [copy.SnapshotId ?? ''] }));
    expect(copied.Snapshots?.[0]?.SnapshotId).toBe(copy.SnapshotId);
    await expect(
      ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [copy.SnapshotId ?? ''] })),
    ).rejects.toThrow();
  });
});

describe('EBS direct APIs in the emulator', () => {
  it('writes, lists, reads back and completes a snapshot in 512 KiB blocks', async () => {
    const ebs = new EBSClient(awsConfig());
    const started = await ebs.send(new StartSnapshotCommand({ VolumeSize: 1, Description: 'smoke' }));
    expect(started.BlockSize).toBe(524288);
    const block = Buffer.alloc(524288);
    block.write('lifeboat block zero', 0);
    const checksum = createHash('sha256').update(block).digest('base64');
    await ebs.send(
      new PutSnapshotBlockCommand({
        SnapshotId: started.SnapshotId,
        BlockIndex: 7,
        BlockData: block,
        DataLength: block.length,
        Checksum: checksum,
        ChecksumAlgorithm: 'SHA256',
      }),
    );
    const completed = await ebs.send(
      new CompleteSnapshotCommand({ SnapshotId: started.SnapshotId, ChangedBlocksCount: 1 }),
    );
    expect(completed.Status).toBe('completed');
    const listed = await ebs.send(new ListSnapshotBlocksCommand({ SnapshotId: started.SnapshotId }));
    expect(listed.BlockSize).toBe(524288);
    expect(listed.Blocks?.map((b) => b.BlockIndex)).toEqual([7]);
    const got = await ebs.send(
      new GetSnapshotBlockCommand({
        SnapshotId: started.SnapshotId,
        BlockIndex: 7,
        BlockToken: listed.Blocks?.[0]?.BlockToken,
      }),
    );
    const data = Buffer.from((await got.BlockData?.transformToByteArray()) ?? []);
    expect(data.length).toBe(524288);
    expect(createHash('sha256').update(data).digest('base64')).toBe(checksum);
  });
});

describe('ECS in the emulator', () => {
  it('runs a Fargate task through to STOPPED', async () => {
    const ecs = new ECSClient(awsConfig());
    const ec2 = new EC2Client(awsConfig());
    const cluster = uniqueName('smoke');
    await ecs.send(new CreateClusterCommand({ clusterName: cluster }));
    const family = uniqueName('mover');
    await ecs.send(
      new RegisterTaskDefinitionCommand({
        family,
        requiresCompatibilities: ['FARGATE'],
        networkMode: 'awsvpc',
        cpu: '256',
        memory: '512',
        // moto 5.2.5 needs a container-level memory value (AWS accepts the task-level one alone).
        containerDefinitions: [
          { name: 'mover', image: 'lifeboat/data-mover:test', essential: true, memory: 512 },
        ],
      }),
    );
    const subnets = await ec2.send(new DescribeSubnetsCommand({}));
    const subnet = subnets.Subnets?.[0]?.SubnetId;
    expect(subnet).toBeDefined();
    // moto 5.2.5 needs security groups (AWS would default to the VPC's default group).
    const groups = await ec2.send(
      new DescribeSecurityGroupsCommand({ Filters: [{ Name: 'group-name', Values: ['default'] }] }),
    );
    const securityGroup = groups.SecurityGroups?.[0]?.GroupId ?? '';
    const run = await ecs.send(
      new RunTaskCommand({
        cluster,
        taskDefinition: family,
        launchType: 'FARGATE',
        networkConfiguration: {
          awsvpcConfiguration: {
            subnets: [subnet ?? ''],
            securityGroups: [securityGroup],
            assignPublicIp: 'DISABLED',
          },
        },
      }),
    );
    const taskArn = run.tasks?.[0]?.taskArn ?? '';
    expect(run.tasks?.[0]?.lastStatus).toBe('RUNNING');
    const seen: string[] = [];
    await waitFor('the task to stop', async () => {
      const task = (await ecs.send(new DescribeTasksCommand({ cluster, tasks: [taskArn] }))).tasks?.[0];
      seen.push(task?.lastStatus ?? '?');
      return task?.lastStatus === 'STOPPED';
    });
    expect(seen.at(-1)).toBe('STOPPED');
    expect(seen.length).toBeGreaterThan(1);
  });
});

describe('STS in the emulator', () => {
  it('assumes a role in the DR account, whose calls land in that account', async () => {
    const env = testEnv();
    const sts = new STSClient(awsConfig());
    expect((await sts.send(new GetCallerIdentityCommand({}))).Account).toBe(env.aws.accounts.source);
    const assumed = await sts.send(
      new AssumeRoleCommand({
        RoleArn: `arn:aws:iam::${env.aws.accounts.dr}:role/lifeboat-restore`,
        RoleSessionName: 'smoke',
        ExternalId: 'lifeboat-smoke',
      }),
    );
    const creds = assumed.Credentials;
    const drConfig = {
      ...awsConfig(),
      credentials: {
        accessKeyId: creds?.AccessKeyId ?? '',
        secretAccessKey: creds?.SecretAccessKey ?? '',
        sessionToken: creds?.SessionToken ?? '',
      },
    };
    expect((await new STSClient(drConfig).send(new GetCallerIdentityCommand({}))).Account).toBe(
      env.aws.accounts.dr,
    );

    const QueueName = uniqueName('dr-only');
    const created = await new SQSClient(drConfig).send(new CreateQueueCommand({ QueueName }));
    expect(created.QueueUrl).toContain(`/${env.aws.accounts.dr}/`);
    const inSource = await new SQSClient(awsConfig()).send(
      new ListQueuesCommand({ QueueNamePrefix: QueueName }),
    );
    expect(inSource.QueueUrls ?? []).toHaveLength(0);
    const inDr = await new SQSClient(drConfig).send(new ListQueuesCommand({ QueueNamePrefix: QueueName }));
    expect(inDr.QueueUrls).toEqual([created.QueueUrl]);
  });
});
