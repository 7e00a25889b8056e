import { describe, expect, it } from 'vitest';
import { restoreHookProblems } from '../../../../functions/validate-restore/restore-hooks.js';
import { type RestoreSpec, restoreSpec } from '../../../../shared/contracts/restore-request.js';

const specWith = (postHooks: unknown[]): RestoreSpec =>
  restoreSpec.parse({ backupName: 'b', hooks: { resources: [{ name: 'db', postHooks }] } });

const at = (j: number, field = ''): string =>
  `restore.spec.hooks.resources[0].postHooks[${j}]${field ? `.${field}` : ''}`;

describe('restore hook problems found by ValidateRestore', () => {
  it('accepts valid init and exec hooks', () => {
    // Prepare
    const spec = specWith([
      { init: { initContainers: [{ name: 'seed', image: 'busybox', command: ['sh', '-c', 'true'] }] } },
      { exec: { container: 'app', command: ['sh'], execTimeout: '30s', waitTimeout: '5m', onError: 'Fail' } },
    ]);

    // Act & Assess
    expect(restoreHookProblems(spec)).toEqual([]);
  });

  it.each([
    {
      title: 'an init container without image and command (Velero ValidateContainer)',
      hooks: [{ init: { initContainers: [{ name: 'seed' }] } }],
      expected: [
        { path: at(0, 'init.initContainers[0]'), message: 'an init container hook needs image, command' },
      ],
    },
    {
      title: 'an init container whose name the API would refuse',
      hooks: [{ init: { initContainers: [{ name: 'Seed_1', image: 'busybox', command: ['true'] }] } }],
      expected: [
        { path: at(0, 'init.initContainers[0].name'), message: expect.stringContaining('container name') },
      ],
    },
    {
      title: 'a post hook with neither init nor exec',
      hooks: [{}],
      expected: [{ path: at(0), message: 'a post hook needs init or exec' }],
    },
    {
      title: 'an init hook without containers',
      hooks: [{ init: { initContainers: [] } }],
      expected: [
        { path: at(0, 'init.initContainers'), message: 'an init hook needs at least one container' },
      ],
    },
    {
      title: 'an exec hook with an empty program',
      hooks: [{ exec: { command: [''] } }],
      expected: [{ path: at(0, 'exec.command[0]'), message: 'the program to run must not be empty' }],
    },
  ])('refuses $title, by field path', ({ hooks, expected }) => {
    // Act & Assess
    expect(restoreHookProblems(specWith(hooks))).toEqual(expected);
  });

  it('lists every problem of every entry', () => {
    // Prepare
    const spec = specWith([{}, { exec: { command: [''] } }, { init: { initContainers: [{ image: 'x' }] } }]);

    // Act
    const paths = restoreHookProblems(spec).map((p) => p.path);

    // Assess
    expect(paths).toEqual([at(2, 'init.initContainers[0]'), at(0), at(1, 'exec.command[0]')]);
  });
});
