/**
 * The ItemBlock queue's message body. Its first line is the message as JSON (`itemBlockMessage`)
 * without the items' `json`; each following line is one item's JSON text, in the order the
 * items appear in the blocks. The objects' JSON thus travels as it is, instead of escaped inside
 * a JSON string: CollectItems does not escape it, workers do not unescape it, and the message is
 * smaller (SQS counts its bytes). JSON text as `JSON.stringify` writes it holds no line break
 * (one inside a string is written `\n`), so a line is an item.
 *
 * A body of one line whose items carry `json` (the format before these lines) reads the same.
 */
import { z } from 'zod';
import { type BlockItem, blockItem, type ItemBlockMessage, itemBlockMessage } from './backup-run.js';

/** The first line: the message, where an item's `json` may instead be on a line of its own. */
const header = itemBlockMessage.extend({
  blocks: z.array(
    z.union([
      z.strictObject({ id: z.string(), items: z.array(blockItem.extend({ json: z.string().optional() })) }),
      z.strictObject({ id: z.string(), itemsKey: z.string() }),
    ]),
  ),
});

/** One block as it goes into a message: its part of the first line, and its items' lines. */
export interface WireBlock {
  readonly header: string;
  readonly lines: readonly string[];
  /** UTF-8 bytes the block adds to a message body (SQS counts bytes), separators included. */
  readonly bytes: number;
}

export function wireBlock(block: ItemBlockMessage['blocks'][number]): WireBlock {
  if (!('items' in block)) {
    const text = JSON.stringify(block);
    return { header: text, lines: [], bytes: Buffer.byteLength(text) + 1 };
  }
  const lines: string[] = [];
  let bytes = 0;
  const items = block.items.map((item) => {
    if (item.json.includes('\n'))
      throw new Error(`the JSON of ${item.ref.resource} ${item.ref.name} is not on one line`);
    lines.push(item.json);
    bytes += Buffer.byteLength(item.json) + 1;
    return { ref: item.ref, kind: item.kind, preferred: item.preferred };
  });
  const text = JSON.stringify({ id: block.id, items });
  return { header: text, lines, bytes: bytes + Buffer.byteLength(text) + 1 };
}

/** A message body from its blocks; `backup` is the message's `backup` field as JSON. */
export function messageBody(options: {
  backup: string;
  messageId: string;
  blocks: readonly WireBlock[];
}): string {
  const first = `{"backup":${options.backup},"messageId":${JSON.stringify(options.messageId)},"blocks":[${options.blocks.map((b) => b.header).join(',')}]}`;
  const lines = options.blocks.flatMap((b) => b.lines);
  return lines.length === 0 ? first : `${first}\n${lines.join('\n')}`;
}

export function itemBlockMessageBody(message: ItemBlockMessage): string {
  return messageBody({
    backup: JSON.stringify(message.backup),
    messageId: message.messageId,
    blocks: message.blocks.map(wireBlock),
  });
}

export type ParsedMessage = { success: true; data: ItemBlockMessage } | { success: false; error: Error };

export function safeParseItemBlockMessage(body: string): ParsedMessage {
  const end = body.indexOf('\n');
  let first: unknown;
  try {
    first = JSON.parse(end < 0 ? body : body.slice(0, end));
  } catch (error) {
    return { success: false, error: error as Error };
  }
  const parsed = header.safeParse(first);
  if (!parsed.success) return { success: false, error: parsed.error };
  const lines = end < 0 ? [] : body.slice(end + 1).split('\n');
  let next = 0;
  const blocks: ItemBlockMessage['blocks'] = [];
  for (const block of parsed.data.blocks) {
    if (!('items' in block)) {
      blocks.push(block);
      continue;
    }
    const items: BlockItem[] = [];
    for (const item of block.items) {
      const json = item.json ?? lines[next++];
      if (json === undefined)
        return { success: false, error: unmatched(lines.length, parsed.data.messageId) };
      items.push({ ref: item.ref, kind: item.kind, preferred: item.preferred, json });
    }
    blocks.push({ id: block.id, items });
  }
  if (next !== lines.length) return { success: false, error: unmatched(lines.length, parsed.data.messageId) };
  return { success: true, data: { backup: parsed.data.backup, messageId: parsed.data.messageId, blocks } };
}

/** The message the body holds; throws when it holds none (a poison message). */
export function parseItemBlockMessage(body: string): ItemBlockMessage {
  const parsed = safeParseItemBlockMessage(body);
  if (!parsed.success) throw parsed.error;
  return parsed.data;
}

function unmatched(lines: number, messageId: string): Error {
  return new MessageLinesMismatch(
    `ItemBlock message ${messageId}: ${lines} item line(s) do not match the items its blocks list`,
  );
}

export class MessageLinesMismatch extends Error {
  override readonly name = 'MessageLinesMismatch';
}
