import { describe, expect, it } from 'vitest';
import { renderRestoreDescribe } from '../../../cli/render/restores.js';
import { renderResults } from '../../../cli/render/results.js';

describe("a run's warnings and errors, as Velero's describe prints them", () => {
  it('groups messages by scope, namespaces by name, each message in the column after its label', () => {
    const lines = renderResults({
      results: {
        errors: { cluster: ['PersistentVolume pv-1: not restored'] },
        warnings: {
          namespaces: { shop: ['ConfigMap a: differs', 'ConfigMap b: differs'], db: ['Secret s: differs'] },
        },
      },
      counts: { warnings: 3, errors: 1 },
    });
    expect(lines.join('\n')).toBe(
      [
        '',
        'Warnings:',
        '  Velero:   <none>',
        '  Cluster:  <none>',
        '  Namespaces:',
        '    db:    Secret s: differs',
        '    shop:  ConfigMap a: differs',
        '           ConfigMap b: differs',
        '',
        'Errors:',
        '  Velero:   <none>',
        '  Cluster:  PersistentVolume pv-1: not restored',
        '  Namespaces: <none>',
      ].join('\n'),
    );
  });

  it('shows nothing when the counts are zero, and the counts alone without a results file', () => {
    expect(renderResults({ results: { errors: {}, warnings: {} }, counts: {} })).toEqual([]);
    expect(renderResults({ results: undefined, counts: { warnings: 2 } })).toEqual([
      '',
      'Errors:    0',
      'Warnings:  2',
    ]);
  });

  it('puts them in restore describe, after the timestamps', () => {
    const text = renderRestoreDescribe({
      name: 'r1',
      document: {
        spec: { backupName: 'nightly' },
        status: { phase: 'Completed', startTimestamp: 't0', completionTimestamp: 't1', warnings: 1 },
      },
      results: { errors: {}, warnings: { velero: ['namespace mapping "a:b" restores nothing'] } },
      resourceList: undefined,
      details: false,
    });
    expect(text).toContain(
      'Completed:  t1\n\nWarnings:\n  Velero:   namespace mapping "a:b" restores nothing\n  Cluster:  <none>\n  Namespaces: <none>\n\nBackup:  nightly\n',
    );
  });
});
