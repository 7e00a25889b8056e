/**
 * The volume sections of `lifeboat backup describe`, laid out as `velero backup describe`
 * prints them (`pkg/cmd/util/output/backup_describer.go`): "Backup Item Operations" (a count,
 * or each operation with `--details`) and "Backup Volumes" (Velero-Native Snapshots, CSI
 * Snapshots, Pod Volume Backups), from the backup's item operations and volumes-info files.
 * Lifeboat adds the skipped volumes with their reasons under `--details`, since it records why.
 * Reads only what it is given; never fetches.
 */
import type { BackupStatus } from '../../shared/domain/storage/backup-document.js';
import type { BackupVolumeInfo } from '../../shared/domain/volumes/info.js';
import type { BackupOperation, ResourceIdentifier } from '../../shared/domain/volumes/operations.js';

const none = '<none included>';

/** Velero's `GroupResource.String()` followed by ` <namespace>/<name>`. */
const identifier = (r: ResourceIdentifier): string =>
  `${r.Group ? `${r.Resource}.${r.Group}` : r.Resource} ${r.Namespace}/${r.Name}`;

/** Rows `label: value` with the values aligned, as Velero's tab writer aligns them. */
function aligned(indent: string, rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([label]) => label.length)) + 3;
  return rows.map(([label, value]) => `${indent}${`${label}:`.padEnd(width)}${value}`);
}

export function renderItemOperations(options: {
  status: BackupStatus;
  operations?: readonly BackupOperation[];
  details: boolean;
}): string[] {
  const s = options.status;
  const attempted = s.backupItemOperationsAttempted ?? 0;
  if (attempted === 0) return [];
  if (!options.details || !options.operations) {
    return [
      `Backup Item Operations:  ${s.backupItemOperationsCompleted ?? 0} of ${attempted} completed successfully, ${s.backupItemOperationsFailed ?? 0} failed (specify --details for more information)`,
      '',
    ];
  }
  const lines = ['Backup Item Operations:'];
  for (const op of options.operations) {
    lines.push(`  Operation for ${identifier(op.spec.ResourceIdentifier)}:`);
    const st = op.status;
    const rows: [string, string][] = [
      ['Backup Item Action Plugin', op.spec.backupItemAction],
      ['Operation ID', op.spec.OperationID],
      ['Phase', st.phase],
    ];
    if (st.error) rows.push(['Operation Error', st.error]);
    if ((st.nTotal ?? 0) > 0 || (st.nCompleted ?? 0) > 0)
      rows.push([
        'Progress',
        `${st.nCompleted ?? 0} of ${st.nTotal ?? 0} complete (${st.operationUnits ?? ''})`,
      ]);
    if (st.description) rows.push(['Progress description', st.description]);
    if (st.created) rows.push(['Created', st.created]);
    if (st.started) rows.push(['Started', st.started]);
    if (st.updated) rows.push(['Updated', st.updated]);
    const block = aligned('    ', rows);
    // Velero prints the items to update between the operation id and the phase.
    const items = (op.spec.PostOperationItems ?? []).map((item) => `      ${identifier(item)}`);
    lines.push(
      ...block.slice(0, 2),
      ...(items.length > 0 ? ['    Items to Update:', ...items] : []),
      ...block.slice(2),
    );
  }
  lines.push('');
  return lines;
}

/** The backup's volumes, and whether each is shown in full (`--details`). */
interface VolumeListing {
  readonly infos: readonly BackupVolumeInfo[];
  readonly details: boolean;
}

export function renderBackupVolumes(options: {
  spec: Readonly<Record<string, unknown>>;
  volumeInfos?: readonly BackupVolumeInfo[];
  details: boolean;
}): string[] {
  if (options.spec.snapshotVolumes === false) return ['Backup Volumes: <none included>', ''];
  const listing: VolumeListing = { infos: options.volumeInfos ?? [], details: options.details };
  return [
    'Backup Volumes:',
    ...nativeSnapshotLines(listing),
    '',
    ...csiSnapshotLines(listing),
    '',
    `  Pod Volume Backups: ${none}`,
    ...(listing.details ? skippedVolumeLines(listing.infos) : []),
    '',
  ];
}

/** "Velero-Native Snapshots": each PV's EBS snapshot (its fields with `--details`). */
function nativeSnapshotLines({ infos, details }: VolumeListing): string[] {
  const native = infos.filter((i) => i.backupMethod === 'NativeSnapshot');
  if (native.length === 0) return [`  Velero-Native Snapshots: ${none}`];
  const lines = ['  Velero-Native Snapshots:'];
  for (const info of native) {
    if (!details) {
      lines.push(`    ${info.pvName ?? ''}: specify --details for more information`);
      continue;
    }
    const n = info.nativeSnapshotInfo;
    lines.push(`    ${info.pvName ?? ''}:`);
    lines.push(
      ...aligned('      ', [
        ['Snapshot ID', n?.snapshotHandle ?? ''],
        ['Type', n?.volumeType ?? ''],
        ['Availability Zone', n?.volumeAZ ?? ''],
        ['IOPS', n?.iops ?? ''],
        // Lifeboat waits for each snapshot: its outcome is known.
        ['Result', info.result ?? ''],
      ]),
    );
  }
  return lines;
}

/** "CSI Snapshots": each PVC's VolumeSnapshot (its content and handle with `--details`). */
function csiSnapshotLines({ infos, details }: VolumeListing): string[] {
  const csi = infos.filter((i) => i.backupMethod === 'CSISnapshot');
  if (csi.length === 0) return [`  CSI Snapshots: ${none}`];
  const lines = ['  CSI Snapshots:'];
  for (const info of csi) {
    lines.push(`    ${info.pvcNamespace ?? ''}/${info.pvcName ?? ''}:`);
    if (!details) {
      lines.push('      Snapshot: included, specify --details for more information');
      continue;
    }
    const c = info.csiSnapshotInfo;
    lines.push('      Snapshot:');
    if (c?.operationID) lines.push(`        Operation ID: ${c.operationID}`);
    lines.push(
      `        Snapshot Content Name: ${c?.vscName ?? ''}`,
      `        Storage Snapshot ID: ${c?.snapshotHandle ?? ''}`,
      `        Snapshot Size (bytes): ${c?.size ?? 0}`,
      `        CSI Driver: ${c?.driver ?? ''}`,
      `        Result: ${info.result ?? ''}`,
    );
  }
  return lines;
}

/** Lifeboat's addition under `--details`: the volumes not backed up, with why (none: nothing). */
function skippedVolumeLines(infos: readonly BackupVolumeInfo[]): string[] {
  const skipped = infos.filter((i) => i.skipped);
  if (skipped.length === 0) return [];
  return [
    '',
    '  Skipped:',
    ...skipped.map((info) => {
      const who = info.pvcName ? `${info.pvcNamespace ?? ''}/${info.pvcName}` : (info.pvName ?? '');
      return `    ${who}: ${info.skippedReason ?? ''}`;
    }),
  ];
}
