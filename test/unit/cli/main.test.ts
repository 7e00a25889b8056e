import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../cli/main.js';
import type { Io } from '../../../cli/verbs.js';

/** main() with its output kept. */
async function lifeboat(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    out: { write: (s: string) => out.push(s) > 0 },
    err: { write: (s: string) => err.push(s) > 0 },
  } as unknown as Io;
  const code = await main(argv, io);
  return { code, out: out.join(''), err: err.join('') };
}

describe('the lifeboat command line', () => {
  // No endpoint from the machine's own settings: a config file that does not exist.
  const saved = { config: process.env.LIFEBOAT_CONFIG, endpoint: process.env.LIFEBOAT_ENDPOINT };
  beforeAll(() => {
    process.env.LIFEBOAT_CONFIG = join(tmpdir(), 'lifeboat-no-such-config', 'config.json');
    delete process.env.LIFEBOAT_ENDPOINT;
  });
  afterAll(() => {
    for (const [name, value] of [
      ['LIFEBOAT_CONFIG', saved.config],
      ['LIFEBOAT_ENDPOINT', saved.endpoint],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });

  it.each([[], ['--help'], ['help'], ['-h']])(
    'prints the overview for %j, exit status 0',
    async (...argv) => {
      const ran = await lifeboat(...argv);
      expect(ran).toMatchObject({ code: 0, err: '' });
      expect(ran.out).toMatch(/^usage: lifeboat <command>/);
    },
  );

  it("prints a verb's usage with --help anywhere before --, exit status 0", async () => {
    const ran = await lifeboat('restore', 'create', 'r1', '--help');
    expect(ran.code).toBe(0);
    expect(ran.out).toMatch(/^usage: lifeboat restore create \[NAME\] \[flags\]\n/);
    expect(ran.out).toContain('--preserve-nodeports[=false]');
  });

  it('lists a noun’s verbs when the verb is missing, as a usage error', async () => {
    const ran = await lifeboat('backup');
    expect(ran.code).toBe(2);
    expect(ran.err).toContain('lifeboat backup describe NAME [flags]');
  });

  it.each([
    {
      argv: ['bakup', 'get'],
      err: 'lifeboat: unknown command "bakup" (one of: backup, restore, schedule, gc, events, server, config, completion, dr); see lifeboat --help\n',
    },
    {
      argv: ['backup', 'list'],
      err: 'lifeboat: lifeboat backup: unknown command "list" (one of: create, get, describe, logs, download, delete)\n',
    },
    {
      argv: ['backup', 'describe', '--local'],
      err: 'lifeboat: lifeboat backup describe needs NAME; see lifeboat backup describe --help\n',
    },
    {
      argv: ['backup', 'get', 'a', 'b'],
      err: 'lifeboat: lifeboat backup get: unexpected argument "b" (takes one NAME)\n',
    },
    {
      argv: ['backup', 'get', '-o', 'xml', '--local'],
      err: 'lifeboat: -o must be json or yaml, not "xml"\n',
    },
    {
      argv: ['backup', 'get'],
      err: 'lifeboat: no Lifeboat API to talk to: give --endpoint URL, set $LIFEBOAT_ENDPOINT, or run lifeboat config set endpoint URL (or add --local to work here)\n',
    },
  ])('answers $argv with one line and exit status 2', async ({ argv, err }) => {
    expect(await lifeboat(...argv)).toEqual({ code: 2, out: '', err });
  });
});
