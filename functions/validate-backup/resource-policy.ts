/**
 * The resource policy a backup names, resolved once, at validation (as Velero's backup
 * controller reads it in prepareBackupRequest): the inline document, or the ConfigMap read from
 * the backed-up cluster. A missing or invalid ConfigMap is a validation problem by field path
 * (Velero: FailedValidation); a cluster that cannot be reached for now is retried by the state
 * machine. Also the volume settings the workers read: the policy with the backup's legacy volume
 * fields and timeouts. Reads one ConfigMap, never logs its contents.
 */

import { type BackupRequest, resourcePolicySource } from '../../shared/contracts/backup-request.js';
import type { VolumeSettings } from '../../shared/contracts/backup-volumes.js';
import type { ValidationResult } from '../../shared/contracts/kubernetes.js';
import {
  resourcePolicyFromConfigMap,
  validateResourcePolicy,
} from '../../shared/contracts/resource-policy.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { parseDuration } from '../../shared/domain/kubernetes/duration.js';
import type { ResourcePolicy } from '../../shared/domain/volumes/policy.js';
import { type ClusterReader, readRequestConfigMap } from '../common/read-configmap.js';

export type { ClusterReader };

/** Velero's defaults: csiSnapshotTimeout 10m, itemOperationTimeout 4h. */
export const DEFAULT_CSI_SNAPSHOT_TIMEOUT_MS = 600_000;
export const DEFAULT_ITEM_OPERATION_TIMEOUT_MS = 14_400_000;

export async function resolveResourcePolicy(
  request: BackupRequest,
  deps: { clusterNamed?: (name: string) => Promise<ClusterReader>; signal?: AbortSignal },
): Promise<ValidationResult<ResourcePolicy | undefined>> {
  const source = resourcePolicySource(request);
  if (!source) return { ok: true, value: undefined };
  if (source.kind === 'inline')
    return validateResourcePolicy(source.input, 'backup.spec.resourcePolicy.inline');
  if (!deps.clusterNamed)
    throw new LifeboatError(
      'ValidateBackup has no access to the cluster to read the resource policy ConfigMap',
    );
  const clusterNamed = deps.clusterNamed;
  const where = `backup.spec.resourcePolicy(ConfigMap ${source.namespace}/${source.name})`;
  const read = await readRequestConfigMap({
    cluster: () => clusterNamed(request.cluster),
    namespace: source.namespace,
    name: source.name,
    path: where,
    namePath: 'backup.spec.resourcePolicy.name',
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (!read.ok) return read;
  const configMap = read.value;
  const data = configMap.data;
  const checked = resourcePolicyFromConfigMap({
    namespace: source.namespace,
    name: source.name,
    data:
      typeof data === 'object' && data !== null
        ? Object.fromEntries(
            Object.entries(data).filter((e): e is [string, string] => typeof e[1] === 'string'),
          )
        : null,
  });
  if (checked.ok) return checked;
  // Problems inside the ConfigMap are named under the reference that pointed at it.
  return {
    ok: false,
    problems: checked.problems.map((p) => ({ path: `${where}.${p.path}`, message: p.message })),
  };
}

/** The settings every worker needs to decide on a volume, from the valid request. */
export function volumeSettingsOf(request: BackupRequest, policy: ResourcePolicy | undefined): VolumeSettings {
  const spec = request.backup.spec;
  const seconds = (text: string | undefined, fallbackMs: number): number =>
    Math.max(1, Math.round((text ? (parseDuration(text) ?? fallbackMs) : fallbackMs) / 1000));
  return {
    cluster: request.cluster,
    // The domain's ResourcePolicy is the document schema's output: stored as validated.
    policy: (policy ?? null) as VolumeSettings['policy'],
    snapshotVolumes: spec.snapshotVolumes ?? null,
    // Velero remaps the deprecated defaultVolumesToRestic.
    defaultVolumesToFsBackup: spec.defaultVolumesToFsBackup ?? spec.defaultVolumesToRestic ?? null,
    snapshotMoveData: spec.snapshotMoveData ?? null,
    // Velero tags snapshots with the Backup's labels, which by then include its location's.
    backupLabels: {
      ...(request.backup.metadata.labels ?? {}),
      'velero.io/storage-location': spec.storageLocation ?? 'default',
    },
    backupAnnotations: { ...(request.backup.metadata.annotations ?? {}) },
    csiSnapshotTimeoutSeconds: seconds(spec.csiSnapshotTimeout, DEFAULT_CSI_SNAPSHOT_TIMEOUT_MS),
    itemOperationTimeoutSeconds: seconds(spec.itemOperationTimeout, DEFAULT_ITEM_OPERATION_TIMEOUT_MS),
    ...(spec.copySnapshots?.length ? { copySnapshots: spec.copySnapshots } : {}),
  };
}
