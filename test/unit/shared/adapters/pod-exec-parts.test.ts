import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exitOf } from '../../../../shared/adapters/kubernetes-pod-exec.js';
import { OutputTail } from '../../../../shared/adapters/output-tail.js';

describe('exitOf', () => {
  it.each([
    ['a Success status is exit code 0', { status: 'Success' }, { exitCode: 0 }],
    [
      'a NonZeroExitCode status carries its code',
      {
        status: 'Failure',
        reason: 'NonZeroExitCode',
        message: 'command terminated with non-zero exit code: exit status 3',
        details: { causes: [{ reason: 'ExitCode', message: '3' }] },
      },
      { exitCode: 3 },
    ],
    [
      'any other failure has no exit code but its message',
      {
        status: 'Failure',
        reason: 'InternalError',
        message: 'exec: "nope": executable file not found in $PATH',
      },
      { error: 'exec: "nope": executable file not found in $PATH' },
    ],
    [
      'a NonZeroExitCode without a readable code is not guessed',
      {
        status: 'Failure',
        reason: 'NonZeroExitCode',
        message: 'odd',
        details: { causes: [{ reason: 'ExitCode' }] },
      },
      { error: 'odd' },
    ],
    [
      'an empty failure still says something',
      { status: 'Failure' },
      { error: 'the command failed without an exit code' },
    ],
  ])('%s', (_title, status, expected) => {
    expect(exitOf(status)).toEqual(expected);
  });
});

describe('OutputTail', () => {
  it('keeps everything under the limit', () => {
    // Prepare
    const tail = new OutputTail(10);

    // Act
    tail.push(Buffer.from('hello '));
    tail.push(Buffer.from('you'));

    // Assess
    expect(tail.text()).toBe('hello you');
    expect(tail.droppedBytes).toBe(0);
  });

  it('keeps the last bytes and counts what it dropped', () => {
    // Prepare
    const tail = new OutputTail(5);

    // Act
    tail.push(Buffer.from('abc'));
    tail.push(Buffer.from('defgh'));
    tail.push(Buffer.from('ij'));

    // Assess
    expect(tail.text()).toBe('fghij');
    expect(tail.droppedBytes).toBe(5);
  });

  it('never starts with a broken character after a cut', () => {
    // Prepare: "é" is two bytes; a limit of 3 cuts the first one in half.
    const tail = new OutputTail(3);

    // Act
    tail.push(Buffer.from('éé'));

    // Assess
    expect(tail.text()).toBe('é');
    expect(tail.droppedBytes).toBe(1);
  });

  it('holds exactly the last bytes of any ASCII stream', () => {
    const ascii = fc.string({ unit: fc.constantFrom(...'abc xyz\n019'.split('')), maxLength: 40 });
    fc.assert(
      fc.property(fc.array(ascii), fc.integer({ min: 1, max: 64 }), (chunks, limit) => {
        const tail = new OutputTail(limit);
        for (const c of chunks) tail.push(Buffer.from(c));
        const all = chunks.join('');
        expect(tail.text()).toBe(all.slice(Math.max(0, all.length - limit)));
        expect(tail.droppedBytes).toBe(Math.max(0, all.length - limit));
      }),
    );
  });

  it('counts the dropped bytes of any binary stream exactly', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 40 })),
        fc.integer({ min: 1, max: 64 }),
        (chunks, limit) => {
          const tail = new OutputTail(limit);
          for (const c of chunks) tail.push(Buffer.from(c));
          const total = chunks.reduce((n, c) => n + c.length, 0);
          expect(tail.droppedBytes).toBe(Math.max(0, total - limit));
        },
      ),
    );
  });
});
