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

export function renderBackupVolumes(options: {
  spec: Readonly<Record<string, unknown>>;
  volumeInfos?: readonly BackupVolumeInfo[];
  details: boolean;
}): string[] {
  if (options.spec.snapshotVolumes === false) return ['Backup Volumes: <none included>', ''];
  const infos = options.volumeInfos ?? [];
  const lines = ['Backup Volumes:'];
  const native = infos.filter((i) => i.backupMethod === 'NativeSnapshot');
  if (native.length === 0) lines.push(`  Velero-Native Snapshots: ${none}`);
  else {
    lines.push('  Velero-Native Snapshots:');
    for (const info of native) {
      if (!options.details) {
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
  }
  lines.push('');
  const csi = infos.filter((i) => i.backupMethod === 'CSISnapshot');
  if (csi.length === 0) lines.push(`  CSI Snapshots: ${none}`);
  else {
    lines.push('  CSI Snapshots:');
    for (const info of csi) {
      lines.push(`    ${info.pvcNamespace ?? ''}/${info.pvcName ?? ''}:`);
      if (!options.details) {
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
  }
  lines.push('', `  Pod Volume Backups: ${none}`);
  const skipped = infos.filter((i) => i.skipped);
  if (options.details && skipped.length > 0) {
    lines.push('', '  Skipped:');
    for (const info of skipped) {
      const who = info.pvcName ? `${info.pvcNamespace ?? ''}/${info.pvcName}` : (info.pvName ?? '');
      lines.push(`    ${who}: ${info.skippedReason ?? ''}`);
    }
  }
  lines.push('');
  return lines;
}
