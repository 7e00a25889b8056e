/**
 * The EBS direct API fixes of test/env/moto/ebs_direct.py, each checked against moto as the
 * launcher starts it: block lineage through volumes and EC2 snapshots, StartSnapshot's parent,
 * encryption and client token, checksums and ChangedBlocksCount, ListChangedBlocks over both
 * snapshots, pagination, and AWS's errors instead of HTTP 500.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  CompleteSnapshotCommand,
  EBSClient,
  EBSServiceException,
  GetSnapshotBlockCommand,
  ListChangedBlocksCommand,
  ListSnapshotBlocksCommand,
  PutSnapshotBlockCommand,
  StartSnapshotCommand,
} from '@aws-sdk/client-ebs';
import {
  CopySnapshotCommand,
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DeleteSnapshotCommand,
  DescribeSnapshotsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { describe, expect, it } from 'vitest';
import { awsConfig } from '../support/env.js';

const BLOCK = 524288;
const ebs = (region?: string): EBSClient => new EBSClient(awsConfig(region ? { region } : {}));
const ec2 = (region?: string): EC2Client => new EC2Client(awsConfig(region ? { region } : {}));
const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('base64');

async function put(client: EBSClient, snapshotId: string, index: number, data: Uint8Array): Promise<void> {
  await client.send(
    new PutSnapshotBlockCommand({
      SnapshotId: snapshotId,
      BlockIndex: index,
      BlockData: data,
      DataLength: data.length,
      Checksum: sha256(data),
      ChecksumAlgorithm: 'SHA256',
    }),
  );
}

/** A completed snapshot made by StartSnapshot with these blocks. */
async function seeded(
  blocks: ReadonlyMap<number, Uint8Array>,
  options: { parent?: string } = {},
): Promise<string> {
  const client = ebs();
  const started = await client.send(
    new StartSnapshotCommand({
      VolumeSize: 1,
      ...(options.parent ? { ParentSnapshotId: options.parent } : {}),
    }),
  );
  const id = started.SnapshotId ?? '';
  for (const [index, data] of blocks) await put(client, id, index, data);
  const done = await client.send(
    new CompleteSnapshotCommand({ SnapshotId: id, ChangedBlocksCount: blocks.size }),
  );
  expect(done.Status).toBe('completed');
  return id;
}

async function listAll(snapshotId: string): Promise<number[]> {
  const res = await ebs().send(new ListSnapshotBlocksCommand({ SnapshotId: snapshotId }));
  return (res.Blocks ?? []).map((b) => b.BlockIndex ?? -1);
}

async function readBlock(snapshotId: string, index: number): Promise<Uint8Array> {
  const listed = await ebs().send(new ListSnapshotBlocksCommand({ SnapshotId: snapshotId }));
  const token = listed.Blocks?.find((b) => b.BlockIndex === index)?.BlockToken;
  const got = await ebs().send(
    new GetSnapshotBlockCommand({ SnapshotId: snapshotId, BlockIndex: index, BlockToken: token }),
  );
  const data = await got.BlockData?.transformToByteArray();
  expect(got.Checksum).toBe(sha256(data ?? new Uint8Array()));
  return data ?? new Uint8Array();
}

async function errorOf(
  promise: Promise<unknown>,
): Promise<{ name: string; reason?: string; status?: number }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EBSServiceException)
      return {
        name: error.name,
        reason: (error as { Reason?: string }).Reason,
        status: error.$metadata.httpStatusCode,
      };
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('EBS direct APIs in the emulator, as AWS answers them', () => {
  it('keeps a volume’s blocks: volume from a snapshot, EC2 snapshot of the volume, copy to another region', async () => {
    const a = randomBytes(BLOCK);
    const b = randomBytes(BLOCK);
    const seed = await seeded(
      new Map([
        [3, a],
        [9, b],
      ]),
    );
    const volume = await ec2().send(
      new CreateVolumeCommand({ SnapshotId: seed, AvailabilityZone: 'us-east-1a' }),
    );
    const snap = await ec2().send(new CreateSnapshotCommand({ VolumeId: volume.VolumeId }));
    const snapshotId = snap.SnapshotId ?? '';
    expect(await listAll(snapshotId)).toEqual([3, 9]);
    expect(Buffer.from(await readBlock(snapshotId, 9)).equals(b)).toBe(true);

    const copy = await ec2('us-west-2').send(
      new CopySnapshotCommand({ SourceRegion: 'us-east-1', SourceSnapshotId: snapshotId }),
    );
    const west = await ebs('us-west-2').send(new ListSnapshotBlocksCommand({ SnapshotId: copy.SnapshotId }));
    expect(west.Blocks?.map((x) => x.BlockIndex)).toEqual([3, 9]);

    await ec2().send(new DeleteSnapshotCommand({ SnapshotId: snapshotId }));
    expect(await errorOf(ebs().send(new ListSnapshotBlocksCommand({ SnapshotId: snapshotId })))).toEqual({
      name: 'ResourceNotFoundException',
      reason: 'SNAPSHOT_NOT_FOUND',
      status: 404,
    });
  });

  it('starts a snapshot from its parent’s blocks, pending in EC2 until completed, once per client token', async () => {
    const parent = await seeded(new Map([[1, randomBytes(BLOCK)]]));
    const client = ebs();
    const ClientToken = randomBytes(8).toString('hex');
    const first = await client.send(
      new StartSnapshotCommand({ VolumeSize: 1, ParentSnapshotId: parent, ClientToken }),
    );
    const again = await client.send(
      new StartSnapshotCommand({ VolumeSize: 1, ParentSnapshotId: parent, ClientToken }),
    );
    expect(again.SnapshotId).toBe(first.SnapshotId);
    expect(first.ParentSnapshotId).toBe(parent);
    const conflict = await errorOf(client.send(new StartSnapshotCommand({ VolumeSize: 2, ClientToken })));
    expect(conflict.name).toBe('ConflictException');
    const both = await errorOf(
      client.send(new StartSnapshotCommand({ VolumeSize: 1, ParentSnapshotId: parent, Encrypted: true })),
    );
    expect(both).toMatchObject({ name: 'ValidationException', status: 400 });

    const id = first.SnapshotId ?? '';
    const state = async (): Promise<string | undefined> =>
      (await ec2().send(new DescribeSnapshotsCommand({ SnapshotIds: [id] }))).Snapshots?.[0]?.State;
    expect(await state()).toBe('pending');
    await put(client, id, 4, randomBytes(BLOCK));
    const done = await client.send(new CompleteSnapshotCommand({ SnapshotId: id, ChangedBlocksCount: 1 }));
    expect(done.Status).toBe('completed');
    expect(await state()).toBe('completed');
    expect(await listAll(id)).toEqual([1, 4]);
  });

  it('refuses a block whose checksum does not match, and fails a snapshot whose ChangedBlocksCount is wrong', async () => {
    const client = ebs();
    const started = await client.send(new StartSnapshotCommand({ VolumeSize: 1 }));
    const data = randomBytes(BLOCK);
    const bad = await errorOf(
      client.send(
        new PutSnapshotBlockCommand({
          SnapshotId: started.SnapshotId,
          BlockIndex: 0,
          BlockData: data,
          DataLength: data.length,
          Checksum: sha256(randomBytes(BLOCK)),
          ChecksumAlgorithm: 'SHA256',
        }),
      ),
    );
    expect(bad).toMatchObject({ name: 'ValidationException', status: 400 });
    await put(client, started.SnapshotId ?? '', 0, data);
    const done = await client.send(
      new CompleteSnapshotCommand({ SnapshotId: started.SnapshotId, ChangedBlocksCount: 2 }),
    );
    expect(done.Status).toBe('error');
  });

  it('lists changed blocks present in either snapshot, ascending', async () => {
    const same = randomBytes(BLOCK);
    const first = await seeded(
      new Map([
        [8, randomBytes(BLOCK)],
        [2, same],
        [5, randomBytes(BLOCK)],
      ]),
    );
    const second = await seeded(
      new Map([
        [7, randomBytes(BLOCK)],
        [5, randomBytes(BLOCK)],
        [0, randomBytes(BLOCK)],
      ]),
      { parent: first },
    );
    const res = await ebs().send(
      new ListChangedBlocksCommand({ FirstSnapshotId: first, SecondSnapshotId: second }),
    );
    const changed = (res.ChangedBlocks ?? []).map((c) => [
      c.BlockIndex,
      !!c.FirstBlockToken,
      !!c.SecondBlockToken,
    ]);
    expect(changed).toEqual([
      [0, false, true],
      [5, true, true],
      [7, false, true],
    ]);
    expect(res.BlockSize).toBe(BLOCK);
  });

  it('pages both listings with MaxResults and NextToken, and starts at StartingBlockIndex', async () => {
    const zero = new Uint8Array(BLOCK);
    const blocks = new Map(Array.from({ length: 230 }, (_, i) => [i * 2, zero] as const));
    const empty = await seeded(new Map());
    const id = await seeded(blocks, { parent: empty });
    const seen: number[] = [];
    let pages = 0;
    let NextToken: string | undefined;
    do {
      const page = await ebs().send(
        new ListSnapshotBlocksCommand({ SnapshotId: id, MaxResults: 100, NextToken }),
      );
      seen.push(...(page.Blocks ?? []).map((b) => b.BlockIndex ?? -1));
      NextToken = page.NextToken;
      pages++;
    } while (NextToken);
    expect(pages).toBe(3);
    expect(seen).toEqual([...blocks.keys()]);
    const from = await ebs().send(new ListSnapshotBlocksCommand({ SnapshotId: id, StartingBlockIndex: 401 }));
    expect(from.Blocks?.map((b) => b.BlockIndex)).toEqual([...blocks.keys()].filter((i) => i >= 401));
    const changed = await ebs().send(
      new ListChangedBlocksCommand({
        FirstSnapshotId: empty,
        SecondSnapshotId: id,
        MaxResults: 100,
      }),
    );
    expect(changed.ChangedBlocks).toHaveLength(100);
    expect(changed.NextToken).toBeTruthy();
  });

  it('compares only snapshots of one lineage: a volume, its source snapshot, their parents', async () => {
    const seed = await seeded(new Map([[1, randomBytes(BLOCK)]]));
    const volume = await ec2().send(
      new CreateVolumeCommand({ SnapshotId: seed, AvailabilityZone: 'us-east-1a' }),
    );
    const ofVolume = (await ec2().send(new CreateSnapshotCommand({ VolumeId: volume.VolumeId }))).SnapshotId;
    const child = await seeded(new Map([[2, randomBytes(BLOCK)]]), { parent: ofVolume ?? '' });
    const related = await ebs().send(
      new ListChangedBlocksCommand({ FirstSnapshotId: seed, SecondSnapshotId: child }),
    );
    expect(related.ChangedBlocks?.map((c) => c.BlockIndex)).toEqual([2]);
    const other = await seeded(new Map([[1, randomBytes(BLOCK)]]));
    expect(
      await errorOf(
        ebs().send(new ListChangedBlocksCommand({ FirstSnapshotId: other, SecondSnapshotId: child })),
      ),
    ).toEqual({ name: 'ValidationException', reason: 'UNRELATED_SNAPSHOTS', status: 400 });
  });

  it('answers errors as AWS does: a block without data, an unknown snapshot', async () => {
    const id = await seeded(new Map([[1, randomBytes(BLOCK)]]));
    expect(
      await errorOf(
        ebs().send(new GetSnapshotBlockCommand({ SnapshotId: id, BlockIndex: 2, BlockToken: 'AAAA' })),
      ),
    ).toEqual({ name: 'ValidationException', reason: 'INVALID_BLOCK_TOKEN', status: 400 });
    expect(
      await errorOf(
        ebs().send(
          new GetSnapshotBlockCommand({
            SnapshotId: 'snap-0123456789abcdef0',
            BlockIndex: 0,
            BlockToken: 'AAAA',
          }),
        ),
      ),
    ).toMatchObject({ name: 'ResourceNotFoundException', status: 404 });
  });

  it('encrypts a started snapshot with the given KMS key, and refuses an unknown key', async () => {
    const key = await new KMSClient(awsConfig()).send(new CreateKeyCommand({}));
    const KmsKeyArn = key.KeyMetadata?.Arn ?? '';
    const started = await ebs().send(new StartSnapshotCommand({ VolumeSize: 1, Encrypted: true, KmsKeyArn }));
    expect(started.KmsKeyArn).toBe(KmsKeyArn);
    const described = await ec2().send(
      new DescribeSnapshotsCommand({ SnapshotIds: [started.SnapshotId ?? ''] }),
    );
    expect(described.Snapshots?.[0]).toMatchObject({ Encrypted: true, KmsKeyId: KmsKeyArn });
    const unknown = await errorOf(
      ebs().send(
        new StartSnapshotCommand({
          VolumeSize: 1,
          Encrypted: true,
          KmsKeyArn: `${KmsKeyArn.slice(0, KmsKeyArn.lastIndexOf('/'))}/00000000-0000-0000-0000-000000000000`,
        }),
      ),
    );
    expect(unknown).toEqual({ name: 'ValidationException', reason: 'INVALID_CUSTOMER_KEY', status: 400 });
  });
});
