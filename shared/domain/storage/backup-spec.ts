/**
 * The Backup spec and annotations as Velero's backup controller stores them in
 * `velero-backup.json` (backup_controller.go prepareBackupRequest, server defaults of 1.18):
 * every default filled in, durations in Go's form, the CSI snapshot resources Velero always
 * excludes, so `velero backup describe` shows a Lifeboat backup as it shows its own.
 * Pure: returns a new spec, never reads the request's meaning beyond these defaults.
 */
import { formatDuration, parseDuration } from '../kubernetes/duration.js';

type Spec = Readonly<Record<string, unknown>>;

/** The Velero server's defaults (pkg/cmd/server/config/config.go). */
export const VELERO_SERVER_DEFAULTS = {
  ttl: '720h0m0s',
  csiSnapshotTimeout: '10m0s',
  itemOperationTimeout: '4h0m0s',
  resourceTimeout: '10m0s',
  volumeGroupSnapshotLabelKey: 'velero.io/volume-group',
  storageLocation: 'default',
} as const;

/** The annotation on which Velero records its server's `--resource-timeout`. */
export const RESOURCE_TIMEOUT_ANNOTATION = 'velero.io/resource-timeout';

/** CSI snapshots are intermediate objects: Velero backs up only those it makes itself. */
const AUTO_EXCLUDED_NAMESPACED = ['volumesnapshots.snapshot.storage.k8s.io'];
const AUTO_EXCLUDED_CLUSTER = ['volumesnapshotcontents.snapshot.storage.k8s.io'];

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** A Go duration as Velero prints it back (`10m` → `10m0s`); unset or zero → the default. */
function duration(value: unknown, fallback: string): string {
  if (typeof value !== 'string' || value === '') return fallback;
  const ms = parseDuration(value);
  return ms === undefined || ms === 0 ? fallback : formatDuration(ms);
}

/** Velero modifyResourceIncludeExclude: the added exclusions, and none of them still included. */
function withExcluded(options: {
  spec: Spec;
  include: string;
  exclude: string;
  added: readonly string[];
}): Record<string, unknown> {
  const excluded = strings(options.spec[options.exclude]);
  const allExcluded = [...excluded, ...options.added.filter((r) => !excluded.includes(r))];
  const included = strings(options.spec[options.include]).filter((r) => !allExcluded.includes(r));
  return {
    ...(options.spec[options.include] !== undefined ? { [options.include]: included } : {}),
    [options.exclude]: allExcluded,
  };
}

/** Velero collections.UseOldResourceFilters. */
function usesOldFilters(spec: Spec): boolean {
  return (
    (spec.includeClusterResources !== undefined && spec.includeClusterResources !== null) ||
    strings(spec.includedResources).length > 0 ||
    strings(spec.excludedResources).length > 0
  );
}

function resourceFilters(spec: Spec): Record<string, unknown> {
  if (usesOldFilters(spec)) {
    const added = [...AUTO_EXCLUDED_NAMESPACED, ...AUTO_EXCLUDED_CLUSTER];
    return withExcluded({ spec, include: 'includedResources', exclude: 'excludedResources', added });
  }
  return {
    ...withExcluded({
      spec,
      include: 'includedClusterScopedResources',
      exclude: 'excludedClusterScopedResources',
      added: AUTO_EXCLUDED_CLUSTER,
    }),
    ...withExcluded({
      spec,
      include: 'includedNamespaceScopedResources',
      exclude: 'excludedNamespaceScopedResources',
      added: AUTO_EXCLUDED_NAMESPACED,
    }),
  };
}

/** The spec as Velero stores it: the request's, with the server's defaults filled in. */
export function storedBackupSpec(spec: Spec): Record<string, unknown> {
  const d = VELERO_SERVER_DEFAULTS;
  const included = strings(spec.includedNamespaces);
  return {
    ...spec,
    // Velero 1.18 writes the implicit "all namespaces" out; 1.17 reads both alike.
    includedNamespaces: included.length > 0 ? spec.includedNamespaces : ['*'],
    ...resourceFilters(spec),
    // Velero's BackupSpec has no omitempty pointer for these structs: always written.
    metadata: spec.metadata ?? {},
    hooks: spec.hooks ?? {},
    ttl: duration(spec.ttl, d.ttl),
    storageLocation:
      typeof spec.storageLocation === 'string' && spec.storageLocation
        ? spec.storageLocation
        : d.storageLocation,
    volumeGroupSnapshotLabelKey:
      typeof spec.volumeGroupSnapshotLabelKey === 'string' && spec.volumeGroupSnapshotLabelKey
        ? spec.volumeGroupSnapshotLabelKey
        : d.volumeGroupSnapshotLabelKey,
    csiSnapshotTimeout: duration(spec.csiSnapshotTimeout, d.csiSnapshotTimeout),
    itemOperationTimeout: duration(spec.itemOperationTimeout, d.itemOperationTimeout),
    // Velero's server defaults: no file-system backup, no data movement.
    defaultVolumesToFsBackup:
      spec.defaultVolumesToRestic === true ||
      (typeof spec.defaultVolumesToFsBackup === 'boolean' ? spec.defaultVolumesToFsBackup : false),
    snapshotMoveData: typeof spec.snapshotMoveData === 'boolean' ? spec.snapshotMoveData : false,
  };
}
