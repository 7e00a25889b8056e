/**
 * The ItemBlocks CollectItems builds, packed into work-queue messages as they come: each block
 * serialized once, a message closed before it would pass the size limit, a block too large for
 * any message kept in the working data instead, and messages sent ten at a time. Its ids carry
 * the attempt, so a retried CollectItems never mixes its messages with an earlier attempt's.
 * Never writes under `backups/`; adds no work per item beyond serializing it once.
 */

import { randomUUID } from 'node:crypto';
import type { BackupRun, BlockItem, ItemBlockMessage } from '../../shared/contracts/backup-run.js';
import { messageBody, type WireBlock, wireBlock } from '../../shared/contracts/item-block-wire.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { WorkQueue } from '../../shared/ports/work-queue.js';

/** SQS takes up to ten messages per batch. */
const BATCH = 10;
/** Room left in a message for its header. */
const HEADER_ROOM = 1_000;

export interface BlockSenderOptions {
  readonly run: BackupRun;
  readonly store: ObjectStore;
  readonly queue: WorkQueue;
  /** Largest message body; larger blocks go to the object store. */
  readonly maxMessageBytes: number;
  readonly signal: AbortSignal | undefined;
}

/** How many messages, blocks and items were sent so far. */
export interface SentCounts {
  readonly messages: number;
  readonly blocks: number;
  readonly items: number;
}

export class BlockSender {
  // A retried CollectItems starts a new attempt: its messages, block items and results never
  // mix with those of an earlier attempt still in flight.
  readonly attempt = randomUUID().slice(0, 8);
  private messageSeq = 0;
  private blockSeq = 0;
  private items = 0;
  /** The blocks of the message being filled, each serialized once when it was built. */
  private pending: WireBlock[] = [];
  private pendingBytes = 0;
  private readonly outgoing: string[] = [];
  private readonly backupHeader: string;
  private readonly work: ReturnType<typeof backupWorkKeys>;

  constructor(private readonly options: BlockSenderOptions) {
    const { run } = options;
    this.work = backupWorkKeys(run);
    this.backupHeader = JSON.stringify({ name: run.name, runId: run.runId, startedAt: run.startedAt });
  }

  get counts(): SentCounts {
    return { messages: this.messageSeq, blocks: this.blockSeq, items: this.items };
  }

  /**
   * Adds a block to the message being filled. Returns what must be awaited before the next
   * block (a block stored for being too large, a batch of messages sent), if anything: most
   * blocks need no await, and so no promise.
   */
  addBlock(blockItems: BlockItem[]): Promise<void> | undefined {
    this.blockSeq++;
    this.items += blockItems.length;
    const id = `${this.attempt}-${String(this.blockSeq).padStart(7, '0')}`;
    const block = wireBlock({ id, items: blockItems });
    if (block.bytes > this.options.maxMessageBytes - HEADER_ROOM) return this.storeAndPlace(id, blockItems);
    this.place(block);
    return this.outgoing.length >= BATCH ? this.sendFullBatch() : undefined;
  }

  /** `addBlock` awaited, for callers that emit one block at a time. */
  readonly emitBlock = async (blockItems: BlockItem[]): Promise<void> => {
    await this.addBlock(blockItems);
  };

  /** Closes the message being filled and sends every message not sent yet. */
  async sendAll(): Promise<void> {
    this.packMessage();
    if (this.outgoing.length > 0) await this.send();
  }

  private packMessage(): void {
    if (this.pending.length === 0) return;
    this.messageSeq++;
    const messageId: ItemBlockMessage['messageId'] = `${this.attempt}-${String(this.messageSeq).padStart(7, '0')}`;
    this.outgoing.push(messageBody({ backup: this.backupHeader, messageId, blocks: this.pending }));
    this.pending = [];
    this.pendingBytes = 0;
  }

  private async sendFullBatch(): Promise<void> {
    if (this.outgoing.length >= BATCH) await this.send();
  }

  private send(): Promise<void> {
    return this.options.queue.send(this.outgoing.splice(0), { signal: this.options.signal });
  }

  private place(block: WireBlock): void {
    // Close the message before it would grow past the limit (room left for its header).
    if (this.pendingBytes + block.bytes > this.options.maxMessageBytes - HEADER_ROOM) this.packMessage();
    this.pending.push(block);
    this.pendingBytes += block.bytes;
  }

  private async storeAndPlace(id: string, blockItems: BlockItem[]): Promise<void> {
    const itemsKey = this.work.blockItems(id);
    await this.options.store.put(itemsKey, JSON.stringify(blockItems), { contentType: 'application/json' });
    this.place(wireBlock({ id, itemsKey }));
    await this.sendFullBatch();
  }
}
