import { describe, expect, it } from 'vitest';
import { storedBackupSpec } from '../../../../../shared/domain/storage/backup-spec.js';

/** Velero's backup controller (prepareBackupRequest) and the server's defaults, rule by rule. */
describe('the Backup spec as Velero stores it', () => {
  it('keeps what the request set, in Go’s duration form', () => {
    const spec = storedBackupSpec({
      includedNamespaces: ['shop'],
      ttl: '24h',
      csiSnapshotTimeout: '5m',
      itemOperationTimeout: '90m',
      defaultVolumesToFsBackup: true,
      snapshotMoveData: true,
      volumeGroupSnapshotLabelKey: 'app.example.com/group',
      hooks: { resources: [{ name: 'freeze' }] },
    });
    expect(spec).toMatchObject({
      includedNamespaces: ['shop'],
      ttl: '24h0m0s',
      csiSnapshotTimeout: '5m0s',
      itemOperationTimeout: '1h30m0s',
      defaultVolumesToFsBackup: true,
      snapshotMoveData: true,
      volumeGroupSnapshotLabelKey: 'app.example.com/group',
      hooks: { resources: [{ name: 'freeze' }] },
    });
  });

  it('excludes the CSI snapshot resources in the old filter fields when the request uses them', () => {
    const spec = storedBackupSpec({
      includedResources: ['deployments', 'volumesnapshots.snapshot.storage.k8s.io'],
      excludedResources: ['secrets'],
    });
    expect(spec).toMatchObject({
      includedResources: ['deployments'],
      excludedResources: [
        'secrets',
        'volumesnapshots.snapshot.storage.k8s.io',
        'volumesnapshotcontents.snapshot.storage.k8s.io',
      ],
    });
    expect(spec).not.toHaveProperty('excludedClusterScopedResources');
  });

  it('treats the deprecated defaultVolumesToRestic as defaultVolumesToFsBackup, and a zero timeout as unset', () => {
    expect(storedBackupSpec({ defaultVolumesToRestic: true, csiSnapshotTimeout: '0s' })).toMatchObject({
      defaultVolumesToFsBackup: true,
      csiSnapshotTimeout: '10m0s',
    });
  });
});
