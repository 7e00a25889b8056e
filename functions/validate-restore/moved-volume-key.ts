/**
 * A restore's `volumeKmsKeyId` against the backup's moved volumes: a volume Lifeboat's data mover
 * wrote into its repository is restored through EBS StartSnapshot, which takes a key ARN only (EC2's
 * CreateVolume also takes a key id or alias). Checked at validation, so such a restore ends
 * FailedValidation before anything is created instead of failing those volumes one by one later.
 */
import type { RestoreSpec } from '../../shared/contracts/restore-request.js';
import type { FieldProblem } from '../../shared/domain/errors.js';
import { shouldInclude } from '../../shared/domain/kubernetes/includes-excludes.js';
import { movedByLifeboat } from '../../shared/domain/volumes/data-movement.js';
import { isKmsKeyArn } from '../../shared/domain/volumes/ebs-volume.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { loadBackupVolumeInfos } from '../plan-restore/plan-volumes.js';

export async function movedVolumeKeyProblems(options: {
  store: ObjectStore;
  backupName: string;
  spec: RestoreSpec;
  signal?: AbortSignal;
}): Promise<FieldProblem[]> {
  const { spec } = options;
  const key = spec.volumeKmsKeyId;
  if (!key || isKmsKeyArn(key) || spec.restorePVs === false) return [];
  let infos: Awaited<ReturnType<typeof loadBackupVolumeInfos>>;
  try {
    infos = await loadBackupVolumeInfos({
      store: options.store,
      backupName: options.backupName,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch {
    // An unreadable volumes-info fails the restore at planning, saying so.
    return [];
  }
  const namespaces = { includes: spec.includedNamespaces ?? ['*'], excludes: spec.excludedNamespaces ?? [] };
  const moved = infos.filter(
    (info) =>
      // Only volumes the repository restores (Lifeboat's data mover, completed): others are
      // re-provisioned empty or fail anyway, and a key id or alias serves them.
      movedByLifeboat(info) &&
      info.snapshotDataMovementInfo?.Phase === 'Completed' &&
      !info.skipped &&
      (info.pvcNamespace === undefined ||
        info.pvcNamespace === '' ||
        shouldInclude(namespaces, info.pvcNamespace)),
  );
  if (moved.length === 0) return [];
  const names = moved.map((info) => (info.pvcName ? `${info.pvcNamespace}/${info.pvcName}` : info.pvName));
  return [
    {
      path: 'restore.spec.volumeKmsKeyId',
      message: `must be a key ARN: backup "${options.backupName}" has volumes in the data mover's repository (${names.join(', ')}), written through EBS StartSnapshot, which takes a key ARN only`,
    },
  ];
}
