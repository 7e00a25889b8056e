import { describe, expect, it } from 'vitest';
import { backupCreateFlags } from '../../../cli/backup/flags.js';
import { parseFlags, UsageError } from '../../../cli/flags.js';
import { restoreCreateFlags } from '../../../cli/restore/flags.js';

const backup = (...args: string[]) =>
  parseFlags({ command: 'backup create', flags: backupCreateFlags, args });
const restore = (...args: string[]) =>
  parseFlags({ command: 'restore create', flags: restoreCreateFlags, args });

describe('parsing a verb’s flags', () => {
  it.each([
    { args: ['--include-cluster-resources'], value: true },
    { args: ['--include-cluster-resources=false'], value: false },
    { args: ['--include-cluster-resources', 'false'], value: false },
    { args: ['--include-cluster-resources', 'true'], value: true },
  ])("reads Velero's optional boolean $args as $value", ({ args, value }) => {
    expect(backup(...args).values['include-cluster-resources']).toBe(value);
  });

  it('leaves a word after an optional boolean that is no boolean as the operand', () => {
    expect(restore('--restore-volumes', 'r1')).toMatchObject({
      values: { 'restore-volumes': true },
      operands: ['r1'],
    });
  });

  it('refuses an optional boolean that is neither true nor false, by name', () => {
    expect(() => backup('--snapshot-volumes=maybe')).toThrow(
      new UsageError('--snapshot-volumes must be true or false, not "maybe"'),
    );
  });

  it('names an unknown flag and the one it was probably meant to be', () => {
    expect(() => backup('--include-namespace', 'a')).toThrow(
      new UsageError(
        'unknown flag --include-namespace (did you mean --include-namespaces?); see lifeboat backup create --help',
      ),
    );
    expect(() => backup('--zzzzzz')).toThrow(
      new UsageError('unknown flag --zzzzzz; see lifeboat backup create --help'),
    );
  });

  it('names a flag whose value is missing, and a switch given a value', () => {
    expect(() => backup('--ttl')).toThrow(
      new UsageError('--ttl needs a value; see lifeboat backup create --help'),
    );
    expect(() => restore('--dry-run=yes')).toThrow(
      new UsageError('--dry-run takes no value; see lifeboat restore create --help'),
    );
  });

  it('takes operands anywhere among the flags, and short flags', () => {
    expect(restore('--from-backup', 'b', 'r1', '-l', 'app=web', '-o', 'json')).toEqual({
      values: { 'from-backup': 'b', selector: 'app=web', output: 'json' },
      operands: ['r1'],
    });
  });
});
