import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { overview, verbUsage } from '../../../cli/usage.js';
import { VERBS } from '../../../cli/verbs.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The README's list of verbs: each `lifeboat …` line of its block, with the lines indented under it. */
function readmeVerbs(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('```sh\nlifeboat backup create');
  const block = readme.slice(start + '```sh\n'.length, readme.indexOf('```', start + 6));
  return block.split(/\n(?=lifeboat )/);
}

const flagsOf = (words: readonly string[]) =>
  Object.entries(VERBS.find((v) => v.words.join(' ') === words.join(' '))?.flags ?? {});

describe('the usage text', () => {
  it.each(VERBS.map((v) => ({ verb: v.words.join(' '), v })))(
    'of $verb lists every flag with its meaning',
    ({ v }) => {
      const usage = verbUsage(v);
      for (const [name, spec] of Object.entries(v.flags)) {
        expect(usage).toContain(`--${name}`);
        expect(usage).toContain(spec.help);
      }
    },
  );

  it('lists every verb, and the exit statuses', () => {
    const text = overview();
    for (const v of VERBS) expect(text).toContain(`lifeboat ${v.words.join(' ')}`);
    expect(text).toContain('Exit status: 0 done; 1 the operation failed');
  });

  it("has Velero's restore flags for the spec fields Lifeboat supports", () => {
    expect(flagsOf(['restore', 'create']).map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'from-schedule',
        'selector',
        'or-selector',
        'include-cluster-resources',
        'restore-volumes',
        'preserve-nodeports',
        'status-include-resources',
        'status-exclude-resources',
        'item-operation-timeout',
        'existing-resource-policy',
        'include-resources',
        'exclude-resources',
      ]),
    );
  });
});

describe('the README', () => {
  it.each(VERBS.map((v) => ({ verb: v.words.join(' '), v })))('lists every flag of $verb', ({ verb, v }) => {
    const entry = readmeVerbs().find(
      (line) => line.startsWith(`lifeboat ${verb} `) || line === `lifeboat ${verb}`,
    );
    expect(entry, `README has no line for lifeboat ${verb}`).toBeDefined();
    const missing = Object.keys(v.flags).filter((name) => name !== 'help' && !entry?.includes(`--${name}`));
    expect(missing).toEqual([]);
  });
});
