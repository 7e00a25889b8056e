import { describe, expect, it } from 'vitest';
import { backupDocument, resourceList } from '../../../../../shared/domain/storage/backup-document.js';
import { backupKeys, VELERO_TOP_LEVEL } from '../../../../../shared/domain/storage/keys.js';
import { formatLogLine } from '../../../../../shared/domain/storage/log.js';
import { countOf, mergeResults, resultOf } from '../../../../../shared/domain/storage/results.js';
import { entryNames } from '../../../../../shared/domain/storage/tarball-layout.js';

describe('the Velero layout of a backup', () => {
  it('names every object of backups/<name>/ as Velero does', () => {
    expect(backupKeys('nightly')).toMatchObject({
      metadata: 'backups/nightly/velero-backup.json',
      contents: 'backups/nightly/nightly.tar.gz',
      logs: 'backups/nightly/nightly-logs.gz',
      results: 'backups/nightly/nightly-results.gz',
      resourceList: 'backups/nightly/nightly-resource-list.json.gz',
      itemOperations: 'backups/nightly/nightly-itemoperations.json.gz',
      volumeInfo: 'backups/nightly/nightly-volumeinfo.json.gz',
      volumeSnapshots: 'backups/nightly/nightly-volumesnapshots.json.gz',
    });
    expect(VELERO_TOP_LEVEL).toContain(backupKeys('x').claim.split('/')[0]);
  });

  it('writes namespaced, cluster-scoped and preferred-version entries', () => {
    const ref = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'shop', name: 'web' };
    expect(entryNames(ref, { preferred: true })).toEqual([
      'resources/deployments.apps/namespaces/shop/web.json',
      'resources/deployments.apps/v1-preferredversion/namespaces/shop/web.json',
    ]);
    expect(
      entryNames(
        { group: '', version: 'v1', resource: 'namespaces', namespace: '', name: 'shop' },
        { preferred: false },
      ),
    ).toEqual(['resources/namespaces/cluster/shop.json']);
  });

  it('lists resources by apiVersion and kind, sorted', () => {
    expect(
      resourceList([
        { apiVersion: 'v1', kind: 'Pod', namespace: 'b', name: 'x' },
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'a', name: 'd' },
        { apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'y' },
        { apiVersion: 'v1', kind: 'Namespace', namespace: '', name: 'a' },
      ]),
    ).toEqual({ 'apps/v1/Deployment': ['a/d'], 'v1/Namespace': ['a'], 'v1/Pod': ['a/y', 'b/x'] });
  });

  it('merges results by scope and counts them', () => {
    const merged = mergeResults(
      { errors: resultOf({ scope: { namespace: 'a' }, message: 'one' }), warnings: {} },
      {
        errors: resultOf({ scope: { namespace: 'a' }, message: 'two' }),
        warnings: resultOf({ scope: 'cluster', message: 'w' }),
      },
    );
    expect(merged).toEqual({ errors: { namespaces: { a: ['one', 'two'] } }, warnings: { cluster: ['w'] } });
    expect(countOf(merged.errors)).toBe(2);
  });

  it('describes the backup as a velero.io/v1 Backup', () => {
    const doc = backupDocument({
      name: 'b',
      spec: { ttl: '24h0m0s' },
      startedAt: new Date('2026-01-01T00:00:00.123Z'),
      completedAt: new Date('2026-01-01T00:01:00Z'),
      expiration: new Date('2026-01-02T00:00:00Z'),
      phase: 'PartiallyFailed',
      totalItems: 3,
      itemsBackedUp: 3,
      errors: 1,
    });
    expect(doc).toEqual({
      apiVersion: 'velero.io/v1',
      kind: 'Backup',
      metadata: { name: 'b', namespace: 'velero', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { ttl: '24h0m0s' },
      status: {
        version: 1,
        formatVersion: '1.1.0',
        phase: 'PartiallyFailed',
        expiration: '2026-01-02T00:00:00Z',
        startTimestamp: '2026-01-01T00:00:00Z',
        completionTimestamp: '2026-01-01T00:01:00Z',
        progress: { totalItems: 3, itemsBackedUp: 3 },
        errors: 1,
      },
    });
  });

  it('writes log lines in the logrus text form', () => {
    expect(
      formatLogLine({
        time: 't',
        level: 'info',
        msg: 'Backed up item',
        fields: { namespace: 'a b', name: 'x' },
      }),
    ).toBe('time="t" level=info msg="Backed up item" name=x namespace="a b"');
  });
});
