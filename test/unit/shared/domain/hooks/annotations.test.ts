import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backupHookFromAnnotations,
  parseHookCommand,
  restoreExecHookFromAnnotations,
  restoreInitHookFromAnnotations,
} from '../../../../../shared/domain/hooks/annotations.js';

describe('parseHookCommand', () => {
  it.each([
    ['a JSON array is the argument list', '["/bin/sh","-c","echo hi"]', ['/bin/sh', '-c', 'echo hi']],
    ['a plain string is one argument', '/scripts/freeze.sh', ['/scripts/freeze.sh']],
    [
      'a string with spaces stays one argument',
      '/bin/fsfreeze --freeze /data',
      ['/bin/fsfreeze --freeze /data'],
    ],
    ['malformed JSON is taken whole', '[not json', ['[not json']],
    ['a JSON array of non-strings is taken whole', '[1,2]', ['[1,2]']],
    ['an empty JSON array is an empty command', '[]', []],
  ])('%s', (_title, value, expected) => {
    // Act
    const command = parseHookCommand(value);

    // Assess
    expect(command).toEqual(expected);
  });

  it('round-trips any argument list written as JSON', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1 }), (args) => {
        expect(parseHookCommand(JSON.stringify(args))).toEqual(args);
      }),
    );
  });
});

describe('backup hook annotations', () => {
  it('reads a pre hook with every field', () => {
    // Prepare
    const annotations = {
      'pre.hook.backup.velero.io/container': 'db',
      'pre.hook.backup.velero.io/command': '["/bin/sh","-c","sync"]',
      'pre.hook.backup.velero.io/on-error': 'Fail',
      'pre.hook.backup.velero.io/timeout': '2m',
    };

    // Act
    const parsed = backupHookFromAnnotations(annotations, 'pre');

    // Assess
    expect(parsed).toEqual({
      hook: { container: 'db', command: ['/bin/sh', '-c', 'sync'], onError: 'Fail', timeout: '2m' },
      warnings: [],
    });
  });

  it.each([
    ['the legacy unprefixed keys are a pre hook', { 'hook.backup.velero.io/command': 'a' }, 'pre', ['a']],
    [
      'the legacy unprefixed keys are not a post hook',
      { 'hook.backup.velero.io/command': 'a' },
      'post',
      undefined,
    ],
    [
      'a prefixed pre hook wins over the legacy keys',
      { 'pre.hook.backup.velero.io/command': 'new', 'hook.backup.velero.io/command': 'old' },
      'pre',
      ['new'],
    ],
    ['a post hook reads the post keys', { 'post.hook.backup.velero.io/command': 'b' }, 'post', ['b']],
    ['a post hook is not a pre hook', { 'post.hook.backup.velero.io/command': 'b' }, 'pre', undefined],
    ['without a command there is no hook', { 'pre.hook.backup.velero.io/container': 'db' }, 'pre', undefined],
    ['an empty command is no hook', { 'pre.hook.backup.velero.io/command': '' }, 'pre', undefined],
  ] as const)('%s', (_title, annotations, phase, command) => {
    // Act
    const parsed = backupHookFromAnnotations(annotations, phase);

    // Assess
    expect(parsed.hook?.command).toEqual(command);
  });

  it('ignores a bad on-error and a bad timeout with a warning each', () => {
    // Prepare
    const annotations = {
      'post.hook.backup.velero.io/command': 'x',
      'post.hook.backup.velero.io/on-error': 'fail',
      'post.hook.backup.velero.io/timeout': 'soon',
    };

    // Act
    const parsed = backupHookFromAnnotations(annotations, 'post');

    // Assess
    expect(parsed.hook).toEqual({ command: ['x'] });
    expect(parsed.warnings).toEqual([
      'annotation post.hook.backup.velero.io/on-error="fail" is neither Continue nor Fail; it is ignored',
      'annotation post.hook.backup.velero.io/timeout="soon" is not a duration; the default is used',
    ]);
  });
});

describe('restore hook annotations', () => {
  it('reads an exec hook with its waits', () => {
    // Prepare
    const annotations = {
      'post.hook.restore.velero.io/container': 'app',
      'post.hook.restore.velero.io/command': '["/restore.sh"]',
      'post.hook.restore.velero.io/on-error': 'Continue',
      'post.hook.restore.velero.io/exec-timeout': '45s',
      'post.hook.restore.velero.io/wait-timeout': '10m',
      'post.hook.restore.velero.io/wait-for-ready': 'true',
    };

    // Act
    const parsed = restoreExecHookFromAnnotations(annotations);

    // Assess
    expect(parsed).toEqual({
      hook: {
        container: 'app',
        command: ['/restore.sh'],
        onError: 'Continue',
        execTimeout: '45s',
        waitTimeout: '10m',
        waitForReady: true,
      },
      warnings: [],
    });
  });

  it.each([
    ['t', true],
    ['False', false],
    ['0', false],
  ])('reads wait-for-ready "%s" as Go ParseBool does', (value, expected) => {
    // Act
    const parsed = restoreExecHookFromAnnotations({
      'post.hook.restore.velero.io/command': 'x',
      'post.hook.restore.velero.io/wait-for-ready': value,
    });

    // Assess
    expect(parsed.hook?.waitForReady).toBe(expected);
  });

  it('ignores an unreadable wait-for-ready with a warning', () => {
    // Act
    const parsed = restoreExecHookFromAnnotations({
      'post.hook.restore.velero.io/command': 'x',
      'post.hook.restore.velero.io/wait-for-ready': 'yes',
    });

    // Assess
    expect(parsed.hook?.waitForReady).toBeUndefined();
    expect(parsed.warnings).toHaveLength(1);
  });

  it('does not take a backup hook for a restore hook', () => {
    // Act
    const parsed = restoreExecHookFromAnnotations({ 'post.hook.backup.velero.io/command': 'x' });

    // Assess
    expect(parsed.hook).toBeUndefined();
  });

  it('reads an init container from the image, name and command', () => {
    // Act
    const parsed = restoreInitHookFromAnnotations({
      'init.hook.restore.velero.io/container-image': 'busybox:1.36',
      'init.hook.restore.velero.io/container-name': 'prepare',
      'init.hook.restore.velero.io/command': '["/bin/sh","-c","ls /data"]',
    });

    // Assess
    expect(parsed.hook).toEqual({
      name: 'prepare',
      image: 'busybox:1.36',
      command: ['/bin/sh', '-c', 'ls /data'],
    });
  });

  it('has no init container without an image, and leaves name and command unset when absent', () => {
    // Act
    const none = restoreInitHookFromAnnotations({ 'init.hook.restore.velero.io/command': 'x' });
    const bare = restoreInitHookFromAnnotations({ 'init.hook.restore.velero.io/container-image': 'img' });

    // Assess
    expect(none.hook).toBeUndefined();
    expect(bare.hook).toEqual({ image: 'img' });
  });
});
