/** Fakes behind the data mover's own ports, for its unit tests. */
import { createHash } from 'node:crypto';
import {
  type BlockPage,
  type ChangedBlockRef,
  EBS_BLOCK_SIZE,
  type SnapshotBlockData,
  type SnapshotBlockRef,
  type SnapshotBlocks,
} from '../../../../shared/ports/snapshot-blocks.js';

export /** Snapshots as maps of block index → data; comparing two is refused unless `compare` allows it. */
class FakeBlocks
  implements Pick<SnapshotBlocks, 'listSnapshotBlocks' | 'listChangedBlocks' | 'getSnapshotBlock'>
{
  readonly changedListings: string[] = [];
  blocksRead = 0;
  constructor(private readonly snapshots: Record<string, Map<number, Uint8Array>>) {}
  async *listSnapshotBlocks(o: { snapshotId: string }): AsyncIterable<BlockPage<SnapshotBlockRef>> {
    const blocks = [...(this.snapshots[o.snapshotId]?.keys() ?? [])].sort((a, b) => a - b);
    yield {
      volumeSizeGiB: 1,
      blockSizeBytes: EBS_BLOCK_SIZE,
      blocks: blocks.map((index) => ({ index, token: `${o.snapshotId}/${index}` })),
    };
  }
  async *listChangedBlocks(o: {
    firstSnapshotId: string;
    secondSnapshotId: string;
  }): AsyncIterable<BlockPage<ChangedBlockRef>> {
    this.changedListings.push(`${o.firstSnapshotId}..${o.secondSnapshotId}`);
    const first = this.snapshots[o.firstSnapshotId] ?? new Map();
    const second = this.snapshots[o.secondSnapshotId] ?? new Map();
    const indexes = [...new Set([...first.keys(), ...second.keys()])].sort((a, b) => a - b);
    const changed = indexes.filter((i) => !Buffer.from(first.get(i) ?? []).equals(second.get(i) ?? []));
    yield {
      volumeSizeGiB: 1,
      blockSizeBytes: EBS_BLOCK_SIZE,
      blocks: changed.map((index) => ({
        index,
        ...(second.has(index) ? { secondToken: `${o.secondSnapshotId}/${index}` } : {}),
      })),
    };
  }
  async getSnapshotBlock(o: { snapshotId: string; blockIndex: number }): Promise<SnapshotBlockData> {
    this.blocksRead++;
    const data = this.snapshots[o.snapshotId]?.get(o.blockIndex);
    if (!data) throw new Error(`no block ${o.blockIndex} in ${o.snapshotId}`);
    return { data, sha256: createHash('sha256').update(data).digest() };
  }
}
