/**
 * Volume images seeded into moto's EBS through the EBS direct APIs, for the data mover's tests
 * (block mode, the entry point) and its benchmark: a snapshot written block by block with
 * StartSnapshot, PutSnapshotBlock and CompleteSnapshot, an image of random, compressible, zero
 * and duplicate blocks spread over three block-map ranges, and a snapshot's blocks read back as
 * SHA-256 hashes.
 */
import { createHash, randomBytes } from 'node:crypto';
import pLimit from 'p-limit';
import { expect } from 'vitest';
import { EBS_BLOCK_SIZE, type SnapshotBlocks } from '../../../shared/ports/snapshot-blocks.js';

/** 5 GiB: 10,240 blocks, three block-map ranges. */
export const VOLUME_GIB = 5;
export const DATA_BLOCKS = 300;

/** A completed snapshot made with StartSnapshot holding these blocks (optionally on a parent). */
export async function writeSnapshot(
  blocks: SnapshotBlocks,
  content: ReadonlyMap<number, Uint8Array>,
  parent?: string,
  volumeSizeGiB = VOLUME_GIB,
): Promise<string> {
  const started = await blocks.startSnapshot({
    volumeSizeGiB,
    ...(parent ? { parentSnapshotId: parent } : {}),
  });
  const entries = [...content];
  for (let i = 0; i < entries.length; i += 16)
    await Promise.all(
      entries
        .slice(i, i + 16)
        .map(([blockIndex, data]) =>
          blocks.putSnapshotBlock({ snapshotId: started.snapshotId, blockIndex, data }),
        ),
    );
  const status = await blocks.completeSnapshot({
    snapshotId: started.snapshotId,
    changedBlocksCount: content.size,
  });
  expect(status).toBe('completed');
  return started.snapshotId;
}

/** The image: random, compressible, zero and duplicate blocks spread over three map ranges. */
export function volumeImage(): Map<number, Uint8Array> {
  const duplicates = Array.from({ length: 4 }, () => randomBytes(EBS_BLOCK_SIZE));
  const image = new Map<number, Uint8Array>();
  for (let i = 0; i < DATA_BLOCKS; i++) {
    const index = i * 34;
    const kind = i % 10;
    if (kind <= 3) image.set(index, randomBytes(EBS_BLOCK_SIZE));
    else if (kind <= 6) image.set(index, Buffer.alloc(EBS_BLOCK_SIZE, `row ${i} of a compressible table; `));
    else if (kind === 7) image.set(index, new Uint8Array(EBS_BLOCK_SIZE));
    else image.set(index, duplicates[i % 4] as Uint8Array);
  }
  return image;
}

export const hashOf = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');
export const isZero = (data: Uint8Array): boolean =>
  Buffer.from(data.buffer, data.byteOffset, data.byteLength).equals(new Uint8Array(data.byteLength));

/** Every block of a snapshot that holds non-zero data, by index: its SHA-256 (unwritten blocks read as zeros). */
export async function volumeHashes(blocks: SnapshotBlocks, snapshotId: string): Promise<Map<number, string>> {
  const hashes = new Map<number, string>();
  const limit = pLimit(32);
  for await (const page of blocks.listSnapshotBlocks({ snapshotId })) {
    await Promise.all(
      page.blocks.map((b) =>
        limit(async () => {
          const { data } = await blocks.getSnapshotBlock({
            snapshotId,
            blockIndex: b.index,
            blockToken: b.token,
          });
          if (!isZero(data)) hashes.set(b.index, hashOf(data));
        }),
      ),
    );
  }
  return new Map([...hashes].sort((a, b) => a[0] - b[0]));
}
