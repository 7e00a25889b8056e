/**
 * VolumeOperations' snapshot copies (Lifeboat's copySnapshots): once a native EBS snapshot, or
 * a CSI snapshot of the EBS CSI driver, has completed, it is shared with each target account
 * (createVolumePermission and a KMS grant, in the source account) and copied there, re-encrypted
 * with the target's key; each copy is then looked at like any volume operation until it
 * completes, fails, or outlives itemOperationTimeout. Re-entrant: the records are the progress;
 * a transient failure leaves a copy as it was for the next look, a refusal fails it.
 */
import type {
  OperationStatus,
  SnapshotCopy,
  VolumeOperation,
  VolumeSettings,
} from '../../shared/contracts/backup-volumes.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { formatDuration } from '../../shared/domain/kubernetes/duration.js';
import { type BackupVolumeInfo, kubeTime } from '../../shared/domain/volumes/info-shapes.js';
import { TIMED_OUT } from '../../shared/domain/volumes/operations.js';
import {
  ebsSnapshotOfCsi,
  placeOf,
  type SnapshotCopyInfo,
} from '../../shared/domain/volumes/snapshot-copies.js';
import type { SnapshotCopies } from '../../shared/ports/snapshot-copies.js';

/** Tags every copy carries: its backup and source, so a retried step finds it (Velero's tag keys). */
export const COPY_OF_TAG = 'lifeboat.io/copy-of';

const placeKey = (copy: { target: SnapshotCopy['target']; sourceSnapshotHandle: string }): string =>
  `${copy.sourceSnapshotHandle}|${copy.target.account ?? ''}|${copy.target.region}`;

/** The EBS snapshot a completed operation made, if it made one that can be copied. */
function sourceSnapshotOf(entry: {
  operation: VolumeOperation;
  status: OperationStatus;
}): string | undefined {
  if (entry.status.phase !== 'Completed') return undefined;
  return entry.operation.method === 'native'
    ? entry.operation.operationId
    : ebsSnapshotOfCsi(entry.status.csi);
}

/** New copy records for completed snapshots that have none yet for a target. */
export function gatherCopies(options: {
  entries: readonly { operation: VolumeOperation; status: OperationStatus }[];
  targets: VolumeSettings['copySnapshots'];
  copies: SnapshotCopy[];
}): void {
  const known = new Set(options.copies.map(placeKey));
  for (const entry of options.entries) {
    const source = sourceSnapshotOf(entry);
    if (!source) continue;
    for (const target of options.targets ?? []) {
      const copy: SnapshotCopy = { target, sourceSnapshotHandle: source, snapshotHandle: '', Phase: 'New' };
      if (known.has(placeKey(copy))) continue;
      known.add(placeKey(copy));
      options.copies.push(copy);
    }
  }
}

interface CopyContext {
  readonly copier: SnapshotCopies | undefined;
  readonly backupName: string;
  readonly now: Date;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/** Shares the source and starts the copy in the target. */
async function startCopy(context: CopyContext, copy: SnapshotCopy): Promise<SnapshotCopy> {
  const { copier, signal } = context;
  if (!copier)
    return { ...copy, Phase: 'Failed', error: 'no snapshot copier is configured for copySnapshots' };
  const withSignal = signal ? { signal } : {};
  if (copy.target.account)
    await copier.share({
      snapshotId: copy.sourceSnapshotHandle,
      account: copy.target.account,
      ...withSignal,
    });
  const { snapshotId } = await copier.copy({
    target: copy.target,
    sourceSnapshotId: copy.sourceSnapshotHandle,
    tags: [
      { key: 'velero.io/backup', value: context.backupName },
      { key: COPY_OF_TAG, value: copy.sourceSnapshotHandle },
    ],
    description: `Lifeboat backup ${context.backupName}: copy of ${copy.sourceSnapshotHandle}`,
    ...withSignal,
  });
  return { ...copy, snapshotHandle: snapshotId, Phase: 'InProgress', startTimestamp: kubeTime(context.now) };
}

/** One look at a started copy in its target. */
async function lookAtCopy(context: CopyContext, copy: SnapshotCopy): Promise<SnapshotCopy> {
  if (!context.copier) return copy;
  const seen = await context.copier.progress({
    target: copy.target,
    snapshotId: copy.snapshotHandle,
    ...(context.signal ? { signal: context.signal } : {}),
  });
  if (seen.state === 'completed')
    return {
      ...copy,
      Phase: 'Completed',
      completionTimestamp: kubeTime(context.now),
      // A copy into the backup's own account names no account: its owner says which one that is.
      ...(!copy.target.account && seen.ownerId ? { backupAccount: seen.ownerId } : {}),
    };
  if (seen.state === 'error')
    return {
      ...copy,
      Phase: 'Failed',
      error: `the copy ${copy.snapshotHandle} failed${seen.stateMessage ? `: ${seen.stateMessage}` : ''}`,
    };
  const started = new Date(copy.startTimestamp ?? context.now).getTime();
  if (context.now.getTime() - started > context.timeoutMs)
    return {
      ...copy,
      Phase: 'Failed',
      error: `${TIMED_OUT} (itemOperationTimeout ${formatDuration(context.timeoutMs)})`,
    };
  return copy;
}

/** Starts new copies and looks at started ones; each record is replaced in place. */
export async function advanceCopies(context: CopyContext & { copies: SnapshotCopy[] }): Promise<void> {
  const { copies } = context;
  for (const [i, copy] of copies.entries()) {
    if (copy.Phase === 'Completed' || copy.Phase === 'Failed') continue;
    try {
      copies[i] = copy.Phase === 'New' ? await startCopy(context, copy) : await lookAtCopy(context, copy);
    } catch (error) {
      if (!(error instanceof LifeboatError)) throw error;
      if (error.retryable) continue;
      copies[i] = { ...copy, Phase: 'Failed', error: error.message };
    }
  }
}

export const copySettled = (copy: SnapshotCopy): boolean =>
  copy.Phase === 'Completed' || copy.Phase === 'Failed';

/** A volume's copies as volumes-info records them, beside its original snapshot. */
function copyInfoOf(copy: SnapshotCopy): SnapshotCopyInfo {
  return {
    ...(copy.target.account ? { account: copy.target.account } : {}),
    region: copy.target.region,
    snapshotHandle: copy.snapshotHandle,
    sourceSnapshotHandle: copy.sourceSnapshotHandle,
    ...(copy.target.kmsKeyId ? { kmsKeyId: copy.target.kmsKeyId } : {}),
    ...(copy.startTimestamp ? { startTimestamp: copy.startTimestamp } : {}),
    ...(copy.completionTimestamp ? { completionTimestamp: copy.completionTimestamp } : {}),
    Phase: copy.Phase,
    ...(copy.error ? { error: copy.error } : {}),
    ...(copy.backupAccount ? { backupAccount: copy.backupAccount } : {}),
  };
}

/** The volumes-info entries with each snapshot's copies (`snapshotCopies`), by the snapshot copied. */
export function withSnapshotCopies(
  infos: readonly BackupVolumeInfo[],
  copies: readonly SnapshotCopy[],
): BackupVolumeInfo[] {
  if (copies.length === 0) return [...infos];
  return infos.map((info) => {
    const handle = info.nativeSnapshotInfo?.snapshotHandle || info.csiSnapshotInfo?.snapshotHandle;
    const mine = handle ? copies.filter((c) => c.sourceSnapshotHandle === handle) : [];
    return mine.length > 0 ? { ...info, snapshotCopies: mine.map(copyInfoOf) } : info;
  });
}

/** The message of a copy that failed: an error of the backup (its DR target lacks the volume). */
export function copyFailureMessage(copy: SnapshotCopy): string {
  return `snapshot ${copy.sourceSnapshotHandle} was not copied to ${placeOf(copy.target)}: ${copy.error ?? 'the copy failed'}`;
}
