/**
 * How backups look on a terminal: `get` as a table and `describe` in the layout of
 * `velero backup describe`: its warnings and errors with their text (results.ts), item
 * operations and backup volumes (backup-volumes.ts); with `--details`, the resource list and
 * each operation and volume.
 */
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import type { Results } from '../../shared/domain/storage/results.js';
import type { BackupVolumeInfo } from '../../shared/domain/volumes/info.js';
import type { BackupOperation } from '../../shared/domain/volumes/operations.js';
import { renderBackupVolumes, renderItemOperations } from './backup-volumes.js';
import { renderResults } from './results.js';
import { table } from './table.js';

const none = '<none>';
const list = (v: unknown): string => (Array.isArray(v) && v.length > 0 ? v.join(', ') : '');
const pairs = (m: Readonly<Record<string, string>> | undefined): string =>
  m && Object.keys(m).length > 0
    ? Object.entries(m)
        .map(([k, v]) => `${k}=${v}`)
        .join(',')
    : none;

export function renderBackupTable(documents: readonly BackupDocument[]): string {
  const rows = [
    ['NAME', 'STATUS', 'ERRORS', 'WARNINGS', 'CREATED', 'EXPIRES'],
    ...documents.map((d) => [
      d.metadata.name,
      d.status.phase,
      String(d.status.errors ?? 0),
      String(d.status.warnings ?? 0),
      d.status.startTimestamp,
      d.status.expiration,
    ]),
  ];
  return table(rows);
}

export function renderBackupDescribe(options: {
  document: BackupDocument;
  resourceList?: Record<string, string[]>;
  results?: Results;
  volumeInfos?: readonly BackupVolumeInfo[];
  itemOperations?: readonly BackupOperation[];
  details: boolean;
}): string {
  const { document: d } = options;
  const spec = d.spec as Record<string, unknown>;
  const s = d.status;
  const lines = [
    ...headLines(d),
    // Velero prints the warnings and errors with their text right after the phase.
    ...renderResults({ results: options.results, counts: s }),
    '',
    ...specLines(d),
    ...renderItemOperations({
      status: s,
      ...(options.itemOperations ? { operations: options.itemOperations } : {}),
      details: options.details,
    }),
    ...resourceListLines(options),
    ...renderBackupVolumes({
      spec,
      ...(options.volumeInfos ? { volumeInfos: options.volumeInfos } : {}),
      details: options.details,
    }),
  ];
  return `${lines.join('\n')}\n`;
}

/** Velero's describe down to the phase: metadata, phase, why it failed. */
function headLines(d: BackupDocument): string[] {
  const s = d.status;
  return [
    `Name:         ${d.metadata.name}`,
    `Namespace:    ${d.metadata.namespace}`,
    `Labels:       ${pairs(d.metadata.labels)}`,
    `Annotations:  ${pairs(d.metadata.annotations)}`,
    '',
    `Phase:  ${s.phase}`,
    ...(s.failureReason ? ['', `Failure reason:  ${s.failureReason}`] : []),
    ...(s.validationErrors?.length
      ? ['', 'Validation errors:', ...s.validationErrors.map((e) => `  ${e}`)]
      : []),
  ];
}

/** Velero's describe after the results, down to the progress: what the spec selects, timestamps. */
function specLines(d: BackupDocument): string[] {
  const spec = d.spec as Record<string, unknown>;
  const s = d.status;
  const clusterScoped =
    spec.includeClusterResources === true
      ? 'included'
      : spec.includeClusterResources === false
        ? 'excluded'
        : 'auto';
  return [
    'Namespaces:',
    `  Included:  ${list(spec.includedNamespaces) || '*'}`,
    `  Excluded:  ${list(spec.excludedNamespaces) || none}`,
    '',
    'Resources:',
    `  Included:        ${list(spec.includedResources) || list(spec.includedNamespaceScopedResources) || '*'}`,
    `  Excluded:        ${list(spec.excludedResources) || list(spec.excludedNamespaceScopedResources) || none}`,
    `  Cluster-scoped:  ${list(spec.includedClusterScopedResources) || clusterScoped}`,
    '',
    `Label selector:  ${spec.labelSelector ? JSON.stringify(spec.labelSelector) : none}`,
    '',
    `Or label selector:  ${Array.isArray(spec.orLabelSelectors) && spec.orLabelSelectors.length > 0 ? spec.orLabelSelectors.map((x) => JSON.stringify(x)).join(' or ') : none}`,
    '',
    `Storage Location:  ${String(spec.storageLocation ?? 'default')}`,
    '',
    `TTL:  ${String(spec.ttl ?? '720h0m0s')}`,
    '',
    `Started:    ${s.startTimestamp}`,
    `Completed:  ${s.completionTimestamp ?? none}`,
    '',
    `Expiration:  ${s.expiration}`,
    '',
    `Total items to be backed up:  ${s.progress?.totalItems ?? 0}`,
    `Items backed up:              ${s.progress?.itemsBackedUp ?? 0}`,
    '',
  ];
}

/** The resource list in full with `--details`; without, a pointer to it (given none: nothing). */
function resourceListLines(options: {
  readonly resourceList?: Record<string, string[]>;
  readonly details: boolean;
}): string[] {
  if (options.details && options.resourceList) {
    const lines = ['Resource List:'];
    for (const [kind, items] of Object.entries(options.resourceList)) {
      lines.push(`  ${kind}:`);
      for (const item of items) lines.push(`    - ${item}`);
    }
    lines.push('');
    return lines;
  }
  if (!options.details) return ['Resource List:  <included resources; use --details to list them>', ''];
  return [];
}
