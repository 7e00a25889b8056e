/**
 * Snapshot copies (Lifeboat's `copySnapshots`, beyond Velero): a backup's native EBS and EBS CSI
 * snapshots copied into other accounts and regions for disaster recovery, recorded in
 * volumes-info beside the original as `snapshotCopies` (Velero ignores keys it does not know),
 * and the copy a restore picks for the account and region its volumes land in, or why it cannot
 * restore the volume there. Pure: never does I/O, never reads a clock.
 */
import type { BackupVolumeInfo, SnapshotCopyInfo } from './info-shapes.js';

export type { CopyPhase, SnapshotCopyInfo } from './info-shapes.js';

/** One `copySnapshots` entry: where copies go, with which key, through which role. */
export interface CopyTarget {
  /** The target account; absent: the backup's own account (a copy to another region). */
  readonly account?: string;
  readonly region: string;
  /** The key copies are encrypted with in the target (else the target's default EBS key). */
  readonly kmsKeyId?: string;
  /** The role in the target account the copy is made through (needed with another account). */
  readonly roleArn?: string;
  readonly externalId?: string;
}

/** Where a restore's volumes land: its own account and region, or the ones the request names. */
export interface VolumeHome {
  /** Absent: the backup's own account. */
  readonly account?: string;
  /** Absent when the restore does not know its region (then any region of the account matches). */
  readonly region?: string;
}

export const placeOf = (target: { account?: string; region?: string }): string =>
  `${target.account ? `account ${target.account}` : "the backup's account"}${target.region ? ` region ${target.region}` : ''}`;

/**
 * Whether a copy is in the home's account. Absent on either side means the backup's own account,
 * which an account-less copy records as `backupAccount`: a DR deployment in the backup's account
 * (home naming it) takes such a copy; one in another account never does.
 */
function sameAccount(copy: SnapshotCopyInfo, home: VolumeHome): boolean {
  const backupAccount = copy.backupAccount ?? '';
  return (copy.account ?? backupAccount) === (home.account ?? backupAccount);
}

/** The copies of a volume that can serve a restore in `home`, completed ones first. */
function copiesAt(info: BackupVolumeInfo, home: VolumeHome): SnapshotCopyInfo[] {
  const copies = info.snapshotCopies ?? [];
  const here = copies.filter(
    (c) => sameAccount(c, home) && (home.region === undefined || c.region === home.region),
  );
  return [...here].sort((a, b) => Number(b.Phase === 'Completed') - Number(a.Phase === 'Completed'));
}

/**
 * The snapshot a restore in `home` creates the volume from: a completed copy there, or the
 * reason the volume cannot be restored there.
 */
export function snapshotCopyFor(
  info: BackupVolumeInfo,
  home: VolumeHome,
): { readonly snapshotHandle: string } | { readonly reason: string } {
  const original =
    info.backupMethod === 'CSISnapshot'
      ? `CSI snapshot ${info.csiSnapshotInfo?.snapshotHandle ?? ''}`
      : `native snapshot ${info.nativeSnapshotInfo?.snapshotHandle ?? ''}`;
  const copy = copiesAt(info, home)[0];
  if (copy?.Phase === 'Completed' && copy.snapshotHandle) return { snapshotHandle: copy.snapshotHandle };
  const where = placeOf(home);
  if (copy?.Phase === 'Failed')
    return { reason: `its ${original} was not copied to ${where}: ${copy.error ?? 'the copy failed'}` };
  if (copy) return { reason: `its ${original}'s copy to ${where} did not complete (phase ${copy.Phase})` };
  const others = (info.snapshotCopies ?? []).map(placeOf);
  return {
    reason: `its ${original} stays in the backup's account and region, and the backup has no copy in ${where} (copySnapshots${others.length > 0 ? `; copies exist in ${others.join(', ')}` : ''})`,
  };
}

/** The copy of `sourceSnapshotHandle` to `target`, not started yet. */
export function newSnapshotCopy(options: {
  target: CopyTarget;
  sourceSnapshotHandle: string;
}): SnapshotCopyInfo {
  const { target } = options;
  return {
    ...(target.account ? { account: target.account } : {}),
    region: target.region,
    snapshotHandle: '',
    sourceSnapshotHandle: options.sourceSnapshotHandle,
    ...(target.kmsKeyId ? { kmsKeyId: target.kmsKeyId } : {}),
    Phase: 'New',
  };
}

/** The EBS snapshot id behind a CSI snapshot of the EBS CSI driver; none for other drivers. */
export function ebsSnapshotOfCsi(
  csi: { driver?: string; snapshotHandle?: string } | undefined,
): string | undefined {
  return csi?.driver === 'ebs.csi.aws.com' && csi.snapshotHandle?.startsWith('snap-')
    ? csi.snapshotHandle
    : undefined;
}
