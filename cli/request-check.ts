/**
 * A request built from flags, checked by the same validation its first step applies, before the
 * command reads a backup or reaches a cluster: each problem is a usage error naming the flag the
 * field came from (`--ttl: …`), not a FailedValidation run with a field path.
 */
import type { FieldProblem } from '../shared/domain/errors.js';
import { UsageError } from './flags.js';

/** Spec fields to the flags that set them, for backup and restore requests alike. */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  backupName: '--from-backup',
  scheduleName: '--from-schedule',
  includedNamespaces: '--include-namespaces',
  excludedNamespaces: '--exclude-namespaces',
  includedResources: '--include-resources',
  excludedResources: '--exclude-resources',
  includeClusterResources: '--include-cluster-resources',
  includedClusterScopedResources: '--include-cluster-scoped-resources',
  excludedClusterScopedResources: '--exclude-cluster-scoped-resources',
  includedNamespaceScopedResources: '--include-namespace-scoped-resources',
  excludedNamespaceScopedResources: '--exclude-namespace-scoped-resources',
  labelSelector: '--selector',
  orLabelSelectors: '--or-selector',
  orderedResources: '--ordered-resources',
  ttl: '--ttl',
  snapshotVolumes: '--snapshot-volumes',
  snapshotMoveData: '--snapshot-move-data',
  defaultVolumesToFsBackup: '--default-volumes-to-fs-backup',
  csiSnapshotTimeout: '--csi-snapshot-timeout',
  itemOperationTimeout: '--item-operation-timeout',
  resourcePolicy: '--resource-policies-configmap',
  namespaceMapping: '--namespace-mappings',
  includeItems: '--include-items',
  existingResourcePolicy: '--existing-resource-policy',
  restorePVs: '--restore-volumes',
  preserveNodePorts: '--preserve-nodeports',
  restoreStatus: '--status-include-resources/--status-exclude-resources',
  resourceModifier: '--resource-modifier-configmap',
  volumeAvailabilityZone: '--volume-availability-zone',
  volumeKmsKeyId: '--volume-kms-key-id',
  volumeRegion: '--volume-region',
  volumeAccountRoleArn: '--volume-account-role-arn',
  volumeAccountExternalId: '--volume-account-external-id',
  copySnapshots: '--copy-snapshots',
};

/** A Schedule's drill target's fields (shared/contracts/schedule-drill.ts) to `schedule create`'s flags. */
const FLAG_OF_DRILL_FIELD: Readonly<Record<string, string>> = {
  cluster: '--drill-cluster',
  namespaceMapping: '--drill-namespace-mappings',
  readyTimeout: '--drill-timeout',
};

/** `backup.spec.ttl` → `--ttl`; `restore.metadata.name` → `NAME`; otherwise the path itself. */
export function flagOfPath(path: string): string {
  const drillField = FLAG_OF_DRILL_FIELD[/^drill\.([A-Za-z]+)/.exec(path)?.[1] ?? ''];
  if (drillField) return drillField;
  const [, section, field = ''] = /^(?:backup|restore)\.(spec|metadata)\.([A-Za-z]+)/.exec(path) ?? [];
  if (section === 'metadata') return field === 'name' ? 'NAME' : path;
  if (path === 'cluster') return '--cluster';
  return FLAG_OF_FIELD[field] ?? path;
}

/** Throws a usage error naming the flags of every problem; returns when there is none. */
export function refuseProblems(problems: readonly FieldProblem[]): void {
  if (problems.length === 0) return;
  throw new UsageError(
    problems
      .map((p) => {
        const flag = flagOfPath(p.path);
        return flag === p.path ? `${p.path}: ${p.message}` : `${flag}: ${p.message} (${p.path})`;
      })
      .join('; '),
  );
}
