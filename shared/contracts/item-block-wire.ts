/**
 * The ItemBlock queue's message body. Its first line is the message as JSON (`itemBlockMessage`)
 * without the items' `json`; each following line is one item's JSON text, in the order the
 * items appear in the blocks. The objects' JSON thus travels as it is, instead of escaped inside
 * a JSON string: CollectItems does not escape it, workers do not unescape it, and the message is
 * smaller (SQS counts its bytes). JSON text as `JSON.stringify` writes it holds no line break
 * (one inside a string is written `\n`), so a line is an item.
 *
 * A body of one line whose items carry `json` (the format before these lines) reads the same, so
 * messages sent before an update are read after it. The reverse does not hold: workers and the
 * dead-letter handler are updated before (or with) CollectItems, and a rollback past this format
 * waits for the item-block queue to drain.
 */
import * as z from 'zod';
import {
  type BlockItem,
  blockItem,
  type ItemBlockMessage,
  itemBlockMessage,
  itemBlockPayload,
} from './backup-run.js';

/** The first line: the message, where an item's `json` may instead be on a line of its own. */
const header = itemBlockMessage.extend({
  blocks: z.array(
    z.union([
      z.strictObject({ id: z.string(), items: z.array(blockItem.extend({ json: z.string().optional() })) }),
      // A block whose items are in the object store, as in any message.
      itemBlockPayload.options[1],
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

/** The first line as a message whose items may lack their JSON: all a dead letter needs to name them. */
export type ItemBlockHeader = z.infer<typeof header>;

export function safeParseItemBlockHeader(
  body: string,
): { success: true; data: ItemBlockHeader; lines: string[] } | { success: false; error: Error } {
  const end = body.indexOf('\n');
  let first: unknown;
  try {
    first = JSON.parse(end < 0 ? body : body.slice(0, end));
  } catch (error) {
    return { success: false, error: error as Error };
  }
  const parsed = header.safeParse(first);
  if (!parsed.success) return { success: false, error: parsed.error };
  return { success: true, data: parsed.data, lines: end < 0 ? [] : body.slice(end + 1).split('\n') };
}

export function safeParseItemBlockMessage(body: string): ParsedMessage {
  const parsed = safeParseItemBlockHeader(body);
  if (!parsed.success) return parsed;
  const { data, lines } = parsed;
  const items = data.blocks.flatMap((b) => ('items' in b ? b.items : []));
  const inline = items.filter((i) => i.json !== undefined).length;
  // Either every item carries its JSON (a one-line body) or none does and each has its line.
  const fits =
    inline === items.length
      ? lines.length === 0
      : inline === 0 && lines.length === items.length && lines.every((l) => l !== '' && !l.endsWith('\r'));
  if (!fits)
    return {
      success: false,
      error: new MessageLinesMismatch(
        `ItemBlock message ${data.messageId}: its ${lines.length} item line(s) do not match the ${items.length} item(s) its blocks list`,
      ),
    };
  let next = 0;
  const blocks: ItemBlockMessage['blocks'] = data.blocks.map((block) =>
    'items' in block
      ? {
          id: block.id,
          items: block.items.map(
            (item): BlockItem => ({
              ref: item.ref,
              kind: item.kind,
              preferred: item.preferred,
              json: item.json ?? (lines[next++] as string),
            }),
          ),
        }
      : block,
  );
  return { success: true, data: { backup: data.backup, messageId: data.messageId, blocks } };
}

/** The message the body holds; throws when it holds none (a poison message). */
export function parseItemBlockMessage(body: string): ItemBlockMessage {
  const parsed = safeParseItemBlockMessage(body);
  if (!parsed.success) throw parsed.error;
  return parsed.data;
}

export class MessageLinesMismatch extends Error {
  override readonly name = 'MessageLinesMismatch';
}
