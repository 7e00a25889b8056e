import { describe, expect, it } from 'vitest';
import { parseFlags, UsageError } from '../../../cli/flags.js';
import { refuseProblems } from '../../../cli/request-check.js';
import { restoreCreateFlags } from '../../../cli/restore/flags.js';
import { defaultRestoreName, restoreRequest, restoreSpec } from '../../../cli/restore/request.js';
import { validateRestoreRequest } from '../../../shared/contracts/restore-request.js';

const values = (...args: string[]) =>
  parseFlags({ command: 'restore create', flags: restoreCreateFlags, args }).values;

describe('restore create’s flags as a Restore request', () => {
  it("sets Velero's fields from Velero's flags", () => {
    const spec = restoreSpec(
      values(
        '--from-schedule=nightly',
        '--selector=app=web',
        '--include-cluster-resources=false',
        '--restore-volumes=false',
        '--preserve-nodeports',
        '--status-include-resources=widgets.example.com',
        '--status-exclude-resources=pods',
        '--item-operation-timeout=2h',
        '--existing-resource-policy=update',
        '--include-resources=configmaps,secrets',
        '--exclude-resources=events',
        '--namespace-mappings=a:b',
      ),
    );
    expect(spec).toEqual({
      scheduleName: 'nightly',
      labelSelector: { matchLabels: { app: 'web' } },
      includeClusterResources: false,
      restorePVs: false,
      preserveNodePorts: true,
      restoreStatus: { includedResources: ['widgets.example.com'], excludedResources: ['pods'] },
      itemOperationTimeout: '2h',
      existingResourcePolicy: 'update',
      includedResources: ['configmaps', 'secrets'],
      excludedResources: ['events'],
      namespaceMapping: { a: 'b' },
    });
    expect(
      validateRestoreRequest(restoreRequest({ name: 'r', values: values('--from-schedule=n') })).ok,
    ).toBe(true);
  });

  it('takes the or-selector, and refuses it with a selector', () => {
    expect(restoreSpec(values('--from-backup=b', '--or-selector', 'a=1 or b=2'))).toMatchObject({
      orLabelSelectors: [{ matchLabels: { a: '1' } }, { matchLabels: { b: '2' } }],
    });
    expect(() => restoreSpec(values('--from-backup=b', '-l', 'a=1', '--or-selector', 'b=2'))).toThrow(
      new UsageError('--selector and --or-selector exclude each other'),
    );
  });

  it('needs one backup to restore from', () => {
    expect(() => restoreSpec(values())).toThrow(
      new UsageError('restore create needs --from-backup BACKUP or --from-schedule SCHEDULE'),
    );
    expect(() => restoreSpec(values('--from-backup=a', '--from-schedule=b'))).toThrow(
      new UsageError('--from-backup and --from-schedule exclude each other: give one'),
    );
  });

  it('names an unnamed restore as Velero does: its backup and the time', () => {
    expect(defaultRestoreName(values('--from-backup=nightly'), new Date('2026-11-27T08:09:10Z'))).toBe(
      'nightly-20261127080910',
    );
  });

  it('names the flag of each invalid field', () => {
    const checked = validateRestoreRequest(
      restoreRequest({ name: 'r', values: values('--from-backup=b', '--existing-resource-policy=always') }),
    );
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(() => refuseProblems(checked.problems)).toThrow(
      /^--existing-resource-policy: .+ \(restore\.spec\.existingResourcePolicy\)$/,
    );
  });
});
