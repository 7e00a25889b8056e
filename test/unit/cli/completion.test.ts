import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { candidates } from '../../../cli/completion.js';
import { main } from '../../../cli/main.js';
import type { Io } from '../../../cli/verbs.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** A backup directory holding backups `daily-1` and `daily-2` and restore `r1`. */
async function backupDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lifeboat-complete-'));
  for (const path of ['backups/daily-1', 'backups/daily-2', 'restores/r1'])
    await mkdir(join(dir, path), { recursive: true });
  return dir;
}

describe('what the shell completes', () => {
  it.each([
    {
      words: [''],
      expected: [
        'backup',
        'restore',
        'schedule',
        'gc',
        'events',
        'server',
        'config',
        'completion',
        'dr',
        'help',
      ],
    },
    { words: ['backup', ''], expected: ['create', 'get', 'describe', 'logs', 'download', 'delete'] },
    { words: ['restore', 'create', '--existing-resource-policy', ''], expected: ['none', 'update'] },
    { words: ['backup', 'get', '-o', ''], expected: ['json', 'yaml'] },
    { words: ['backup', 'create', 'x', '--kubeconfig', ''], expected: [':files'] },
    { words: ['backup', 'get', '--dir', ''], expected: [':dirs'] },
    { words: ['completion', ''], expected: ['bash', 'zsh'] },
  ])('after $words: $expected', async ({ words, expected }) => {
    expect(await candidates(words)).toEqual(expected);
  });

  it("offers a verb's flags after a dash", async () => {
    const flags = await candidates(['restore', 'create', '--']);
    expect(flags).toEqual(
      expect.arrayContaining(['--from-backup', '--namespace-mappings', '--dry-run', '--local']),
    );
  });

  it('offers the backups and restores of the directory --dir names', async () => {
    const dir = await backupDir();
    expect(await candidates(['backup', 'describe', '--dir', dir, ''])).toEqual(['daily-1', 'daily-2']);
    expect(await candidates(['restore', 'create', '--dir', dir, '--from-backup', ''])).toEqual([
      'daily-1',
      'daily-2',
    ]);
    expect(await candidates(['restore', 'describe', '--local', '--dir', dir, ''])).toEqual(['r1']);
    // The operand is given already: nothing more.
    expect(await candidates(['backup', 'describe', 'daily-1', '--dir', dir, ''])).toEqual([]);
  });

  it("offers the kubeconfig's contexts", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lifeboat-complete-kc-'));
    const kubeconfig = join(dir, 'config');
    await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\ncontexts:\n- name: prod\n- name: staging\n');
    expect(await candidates(['backup', 'create', 'x', '--kubeconfig', kubeconfig, '--context', ''])).toEqual([
      'prod',
      'staging',
    ]);
  });

  it('refuses a shell it has no script for, as a usage error', async () => {
    const err: string[] = [];
    const io = {
      out: { write: () => true },
      err: { write: (s: string) => err.push(s) > 0 },
    } as unknown as Io;
    expect(await main(['completion', 'fish'], io)).toBe(2);
    expect(err.join('')).toBe(
      'lifeboat: lifeboat completion: "fish" is not a shell this completes (bash or zsh)\n',
    );
  });

  it('completes in bash through its script and the command itself', async () => {
    // `lifeboat` on PATH runs the sources: the script calls the command by name, as installed.
    const bin = await mkdtemp(join(tmpdir(), 'lifeboat-complete-bin-'));
    await writeFile(
      join(bin, 'lifeboat'),
      `#!/bin/sh\nexec "${process.execPath}" --import tsx "${join(root, 'cli', 'bin', 'lifeboat.ts')}" "$@"\n`,
    );
    await chmod(join(bin, 'lifeboat'), 0o755);
    const dir = await backupDir();
    const complete = (line: string): string =>
      execFileSync(
        'bash',
        [
          '-c',
          `source <(lifeboat completion bash); COMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _lifeboat; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { cwd: root, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, encoding: 'utf8' },
      );
    expect(complete('lifeboat backup de')).toBe('describe\ndelete\n');
    expect(complete(`lifeboat backup describe --dir ${dir} daily-`)).toBe('daily-1\ndaily-2\n');
  }, 60_000);
});
