import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import type { ItemBlockMessage } from '../../../../shared/contracts/backup-run.js';
import {
  itemBlockMessageBody,
  MessageLinesMismatch,
  messageBody,
  parseItemBlockMessage,
  safeParseItemBlockHeader,
  safeParseItemBlockMessage,
  wireBlock,
} from '../../../../shared/contracts/item-block-wire.js';

const backup = { name: 'nightly', runId: 'run-1', startedAt: '2026-01-01T00:00:00.000Z' };

const item = (name: string, object: unknown = { metadata: { name }, data: { quote: 'say "hi"\n' } }) => ({
  ref: { group: '', version: 'v1', resource: 'configmaps', namespace: 'shop', name },
  kind: 'ConfigMap',
  preferred: true,
  json: JSON.stringify(object),
});

const message: ItemBlockMessage = {
  backup,
  messageId: 'a1-0000001',
  blocks: [
    { id: 'b1', items: [item('one'), item('two')] },
    { id: 'b2', itemsKey: 'work/blocks/b2.json' },
    { id: 'b3', items: [item('three')] },
  ],
};

describe('ItemBlock message bodies', () => {
  it('carry each item’s JSON as it is, on a line of its own after the message line', () => {
    const body = itemBlockMessageBody(message);
    const [first, ...lines] = body.split('\n');
    expect(lines).toEqual([item('one').json, item('two').json, item('three').json]);
    expect(first).not.toContain('"json"');
    expect(JSON.parse(first ?? '')).toMatchObject({ messageId: 'a1-0000001', backup });
    expect(parseItemBlockMessage(body)).toEqual(message);
  });

  it('read a one-line message whose items carry their JSON (the earlier format) the same', () => {
    expect(parseItemBlockMessage(JSON.stringify(message))).toEqual(message);
  });

  it('count the bytes a block adds, so that a message holds to its size limit', () => {
    const wide = { id: 'b4', items: [item('wïde-😀', { text: 'é😀\u2028\u2029 line\nbreak' })] };
    const blocks = [...message.blocks, wide].map(wireBlock);
    const body = messageBody({ backup: JSON.stringify(backup), messageId: message.messageId, blocks });
    const frame = `{"backup":${JSON.stringify(backup)},"messageId":"${message.messageId}","blocks":[]}`;
    // Each block's count includes one separator; the first block has none before it.
    expect(Buffer.byteLength(body)).toBe(
      Buffer.byteLength(frame) + blocks.reduce((n, b) => n + b.bytes, 0) - 1,
    );
  });

  it('refuse a body whose item lines do not match its items, naming the message', () => {
    const body = itemBlockMessageBody(message);
    const [first = '', ...lines] = body.split('\n');
    const fewer = body.slice(0, body.lastIndexOf('\n'));
    const more = `${body}\n{}`;
    const trailing = `${body}\n`;
    const crlf = body.replaceAll('\n', '\r\n');
    const empty = [first, '', ...lines.slice(1)].join('\n');
    // One item with its JSON inline, the others on lines: neither format.
    const mixed = [
      first.replace('"preferred":true}', `"preferred":true,"json":${JSON.stringify(lines[0])}}`),
      ...lines.slice(1),
    ].join('\n');
    expect(mixed).not.toBe(body);
    for (const wrong of [fewer, more, trailing, crlf, empty, mixed]) {
      const parsed = safeParseItemBlockMessage(wrong);
      expect(parsed.success).toBe(false);
      if (!parsed.success) {
        expect(parsed.error).toBeInstanceOf(MessageLinesMismatch);
        expect(parsed.error.message).toContain('a1-0000001');
      }
    }
    expect(() => parseItemBlockMessage(fewer)).toThrow(MessageLinesMismatch);
  });

  it('still give the first line of a body whose item lines are damaged, to name its items', () => {
    const body = itemBlockMessageBody(message);
    const parsed = safeParseItemBlockHeader(body.slice(0, body.indexOf('\n')));
    expect(parsed.success).toBe(true);
    if (parsed.success)
      expect(parsed.data.blocks.flatMap((b) => ('items' in b ? b.items.map((i) => i.ref.name) : []))).toEqual(
        ['one', 'two', 'three'],
      );
    expect(safeParseItemBlockHeader('{"not":"a block"}').success).toBe(false);
  });

  it('refuse a message line that is not an ItemBlock message', () => {
    expect(() => parseItemBlockMessage('{"not":"a block"}')).toThrow(ZodError);
    expect(() => parseItemBlockMessage(`{"backup":`)).toThrow(SyntaxError);
    const bad = itemBlockMessageBody(message).replace('"messageId":"a1-0000001"', '"messageId":7');
    expect(safeParseItemBlockMessage(bad).success).toBe(false);
  });

  it('refuse to put an item whose JSON spans lines into a message', () => {
    const spread = { ...item('pretty'), json: JSON.stringify({ a: 1 }, null, 2) };
    expect(() => wireBlock({ id: 'b', items: [spread] })).toThrow(/pretty/);
  });

  it('give back every message they were made from', () => {
    // Any UTF-16 code units, lone surrogates and line separators included, in names and objects.
    const name = fc.string({ minLength: 1, maxLength: 12, unit: 'binary' });
    const blockArb = fc.oneof(
      fc.record({
        id: name,
        items: fc.array(
          fc
            .record({ name, object: fc.jsonValue({ stringUnit: 'binary' }) })
            .map(({ name: n, object }) => item(n, object)),
          { maxLength: 4 },
        ),
      }),
      fc.record({ id: name, itemsKey: name }),
    );
    fc.assert(
      fc.property(name, fc.array(blockArb, { maxLength: 5 }), (messageId, blocks) => {
        const original: ItemBlockMessage = { backup, messageId, blocks };
        expect(parseItemBlockMessage(itemBlockMessageBody(original))).toEqual(original);
      }),
    );
  });
});
