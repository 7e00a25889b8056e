/**
 * The ItemBlock queue CollectItems sends to when a backup follows a recipe: nothing is sent to
 * the workers yet. Each block is split among the workflow's group steps (shared/domain/
 * shared/domain/recipes/groups.ts: the first group that selects an item takes it, with the related items of
 * its block it admits), and each step's messages are kept in the working data, ten a key, under
 * ids `<attempt>-s<step>-<seq>`, until the step sends them (BackupRecipeGroup). Items no group
 * takes are counted, not kept. Parses every object for its labels (recipe backups only).
 */
import { type BlockItem, blockItem, type ItemBlockMessage } from '../../shared/contracts/backup-run.js';
import {
  messageBody,
  parseItemBlockMessage,
  type WireBlock,
  wireBlock,
} from '../../shared/contracts/item-block-wire.js';
import { assignBlockToGroups, type RecipeGroupFilter } from '../../shared/domain/recipes/groups.js';
import { backupWorkKeys, recipeStepMessagePrefix } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { WorkQueue } from '../../shared/ports/work-queue.js';

type BlockPayload = ItemBlockMessage['blocks'][number];

interface StepBuffer {
  /** The JSON of the blocks of the message being filled. */
  pending: WireBlock[];
  pendingBytes: number;
  /** Packed message bodies not yet written. */
  outgoing: string[];
  messages: number;
  batches: number;
  blocks: number;
  items: number;
}

export interface StepCounts {
  readonly messages: number;
  readonly blocks: number;
  readonly items: number;
}

function labelsOf(item: BlockItem): Record<string, string> {
  const metadata = (JSON.parse(item.json) as { metadata?: { labels?: unknown } }).metadata;
  const labels = metadata?.labels;
  return typeof labels === 'object' && labels !== null ? (labels as Record<string, string>) : {};
}

export class RecipeStepQueue implements WorkQueue {
  private readonly store: ObjectStore;
  private readonly run: { name: string; runId: string; startedAt: string };
  private readonly groups: readonly { step: number; filter: RecipeGroupFilter }[];
  private readonly maxMessageBytes: number;
  private readonly buffers = new Map<number, StepBuffer>();
  private attempt: string | undefined;
  /** Items of the request's selection that no group takes. */
  unassigned = 0;

  constructor(options: {
    store: ObjectStore;
    run: { name: string; runId: string; startedAt: string };
    /** The workflow's group steps, in order. */
    groups: readonly { step: number; filter: RecipeGroupFilter }[];
    maxMessageBytes?: number;
  }) {
    this.store = options.store;
    this.run = options.run;
    this.groups = options.groups;
    this.maxMessageBytes = options.maxMessageBytes ?? 200_000;
    for (const { step } of this.groups)
      this.buffers.set(step, {
        pending: [],
        pendingBytes: 0,
        outgoing: [],
        messages: 0,
        batches: 0,
        blocks: 0,
        items: 0,
      });
  }

  async send(messages: readonly string[], options?: { signal?: AbortSignal }): Promise<void> {
    for (const body of messages) {
      const message = parseItemBlockMessage(body);
      // CollectItems' message ids are `<attempt>-<seq>`: the steps' ids keep the attempt.
      this.attempt ??= message.messageId.split('-')[0] ?? 'recipe';
      for (const block of message.blocks) await this.split(block, options?.signal);
    }
    for (const step of this.buffers.keys()) await this.write(step, { force: false, signal: options?.signal });
  }

  private async itemsOf(block: BlockPayload, signal?: AbortSignal): Promise<BlockItem[]> {
    if ('items' in block) return block.items;
    const raw = await this.store.get(block.itemsKey, { signal });
    return raw ? blockItem.array().parse(JSON.parse(Buffer.from(raw).toString('utf8'))) : [];
  }

  private async split(block: BlockPayload, signal?: AbortSignal): Promise<void> {
    const items = await this.itemsOf(block, signal);
    const assigned = assignBlockToGroups({
      items: items.map((item) => ({ ref: item.ref, labels: labelsOf(item) })),
      groups: this.groups.map((g) => g.filter),
    });
    for (const [g, { step }] of this.groups.entries()) {
      const part = items.filter((_, i) => assigned[i] === g);
      if (part.length > 0) await this.add(step, { id: block.id, items: part }, signal);
    }
    this.unassigned += assigned.filter((g) => g === undefined).length;
  }

  private async add(
    step: number,
    block: { id: string; items: BlockItem[] },
    signal?: AbortSignal,
  ): Promise<void> {
    const buffer = this.buffers.get(step) as StepBuffer;
    buffer.blocks++;
    buffer.items += block.items.length;
    let entry = wireBlock(block);
    if (entry.bytes > this.maxMessageBytes - 1_000) {
      // Too large for a message: its items wait in the object store, as CollectItems does.
      const itemsKey = backupWorkKeys(this.run).blockItems(`${block.id}-s${step}`);
      await this.store.put(itemsKey, JSON.stringify(block.items), {
        contentType: 'application/json',
        ...(signal ? { signal } : {}),
      });
      entry = wireBlock({ id: block.id, itemsKey });
    }
    if (buffer.pendingBytes + entry.bytes > this.maxMessageBytes - 1_000) this.pack(step);
    buffer.pending.push(entry);
    buffer.pendingBytes += entry.bytes;
  }

  private pack(step: number): void {
    const buffer = this.buffers.get(step) as StepBuffer;
    if (buffer.pending.length === 0) return;
    buffer.messages++;
    const messageId = `${recipeStepMessagePrefix(this.attempt ?? 'recipe', step)}${String(buffer.messages).padStart(7, '0')}`;
    const header = JSON.stringify({
      name: this.run.name,
      runId: this.run.runId,
      startedAt: this.run.startedAt,
    });
    buffer.outgoing.push(messageBody({ backup: header, messageId, blocks: buffer.pending }));
    buffer.pending = [];
    buffer.pendingBytes = 0;
  }

  private async write(
    step: number,
    options: { force: boolean; signal?: AbortSignal | undefined },
  ): Promise<void> {
    const buffer = this.buffers.get(step) as StepBuffer;
    if (options.force) this.pack(step);
    if (buffer.outgoing.length < 10 && !(options.force && buffer.outgoing.length > 0)) return;
    buffer.batches++;
    await this.store.put(
      backupWorkKeys(this.run).stepMessages(step, buffer.batches),
      JSON.stringify(buffer.outgoing.splice(0)),
      { contentType: 'application/json', ...(options.signal ? { signal: options.signal } : {}) },
    );
  }

  /** Writes what is left and returns each group step's counts. */
  async close(options?: { signal?: AbortSignal }): Promise<Map<number, StepCounts>> {
    const counts = new Map<number, StepCounts>();
    for (const [step, buffer] of this.buffers) {
      await this.write(step, { force: true, signal: options?.signal });
      counts.set(step, { messages: buffer.messages, blocks: buffer.blocks, items: buffer.items });
    }
    return counts;
  }
}
