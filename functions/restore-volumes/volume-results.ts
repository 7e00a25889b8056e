/**
 * What the volume steps leave for FinalizeRestore: the restore's volume info
 * (`restores/<name>/<name>-volumeinfo.json.gz`, Velero RestoreVolumeInfo: each volume of the
 * restore, with how it was restored when it was), and their log lines and results (errors and
 * warnings by namespace, or the cluster's for PVs). Reads the working data only.
 */

import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import {
  type ProvisionedProgress,
  provisionedProgress,
  type VolumePlan,
  type VolumesProgress,
  volumePlan,
  volumesProgress,
} from '../../shared/contracts/restore-volumes.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import { FILE_UPLOADER } from '../../shared/domain/volumes/data-movement.js';
import {
  type RestoreVolumeInfo,
  restoredFromNativeSnapshot,
} from '../../shared/domain/volumes/info-shapes.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

async function readJson(store: ObjectStore, key: string): Promise<unknown> {
  const raw = await store.get(key);
  return raw ? JSON.parse(Buffer.from(raw).toString('utf8')) : undefined;
}

export async function restoreVolumeResults(options: {
  store: ObjectStore;
  run: RestoreRun;
}): Promise<{ infos: RestoreVolumeInfo[]; log: LogEvent[]; results: Results }> {
  const work = restoreWorkKeys(options.run);
  const rawPlan = await readJson(options.store, work.volumes);
  if (rawPlan === undefined) return { infos: [], log: [], results: emptyResults };
  const plan: VolumePlan = volumePlan.parse(rawPlan);
  const rawNative = await readJson(options.store, work.volumesProgress);
  const native = rawNative === undefined ? undefined : volumesProgress.parse(rawNative);
  const rawProvisioned = await readJson(options.store, work.provisionedProgress);
  const provisioned = rawProvisioned === undefined ? undefined : provisionedProgress.parse(rawProvisioned);

  const infos: RestoreVolumeInfo[] = [...(plan.restoreInfos as RestoreVolumeInfo[])];
  for (const volume of plan.native) infos.push(nativeVolumeInfo(volume, native?.volumes[volume.pvName]));
  addFileRestoreInfos({ infos, plan, provisioned });
  const log = [...plan.log, ...(native?.log ?? []), ...(provisioned?.log ?? [])];
  return { infos, log, results: resultsOfLog(log) };
}

type NativeVolume = VolumePlan['native'][number];
type NativeOutcome = VolumesProgress['volumes'][string];

/** The restore entry of one volume RestoreVolumes re-created (or could not). */
function nativeVolumeInfo(volume: NativeVolume, outcome: NativeOutcome | undefined): RestoreVolumeInfo {
  const names = {
    pvName: volume.pvName,
    ...(volume.pvcName ? { pvcName: volume.pvcName, pvcNamespace: volume.pvcNamespace ?? '' } : {}),
  };
  const restored = outcome?.volumeId && !outcome.error;
  if (volume.movedData) {
    // Velero's restore entry of a data-moved volume: its method, snapshotDataMoved, the movement.
    return restored
      ? {
          ...names,
          restoreMethod: volume.movedData.backupMethod,
          snapshotDataMoved: true,
          snapshotDataMovementInfo: {
            ...volume.movedData.info,
            retainedSnapshot: volume.movedData.info.retainedSnapshot ?? '',
          },
        }
      : { ...names, snapshotDataMoved: false };
  }
  // Velero tracks a native snapshot once its volume was created; a failed one has no method.
  return restored
    ? restoredFromNativeSnapshot({
        ...names,
        snapshotHandle: volume.snapshotHandle,
        volumeType: volume.volumeType,
        volumeAZ: volume.availabilityZone,
        ...(volume.iops ? { iops: volume.iops } : {}),
      })
    : { ...names, snapshotDataMoved: false };
}

/** Velero's PodVolumeRestore entry for each volume whose files came back from the repository. */
function addFileRestoreInfos(options: {
  readonly infos: RestoreVolumeInfo[];
  readonly plan: VolumePlan;
  readonly provisioned: ProvisionedProgress | undefined;
}): void {
  const { infos } = options;
  for (const volume of options.plan.provisioned) {
    const key = `${volume.pvcNamespace}/${volume.pvcName}`;
    if (!volume.files || options.provisioned?.files?.[key]?.state !== 'Completed') continue;
    const at = infos.findIndex((i) => i.pvcNamespace === volume.pvcNamespace && i.pvcName === volume.pvcName);
    const entry: RestoreVolumeInfo = {
      pvcName: volume.pvcName,
      pvcNamespace: volume.pvcNamespace,
      restoreMethod: 'PodVolumeRestore',
      snapshotDataMoved: false,
      pvrInfo: {
        snapshotHandle: volume.files.manifestId,
        uploaderType: FILE_UPLOADER,
        volumeName: volume.files.volumeName,
        podName: volume.files.podName,
        podNamespace: volume.pvcNamespace,
        Phase: 'Completed',
      },
    };
    if (at >= 0) infos[at] = entry;
    else infos.push(entry);
  }
}

/** The errors and warnings of the volume steps' log: by namespace, or the cluster's for PVs. */
function resultsOfLog(log: readonly LogEvent[]): Results {
  let results = emptyResults;
  for (const event of log) {
    if (event.level !== 'error' && event.level !== 'warning') continue;
    const namespace = event.fields?.namespace;
    const name = String(event.fields?.name ?? '');
    const kind =
      event.fields?.resource === 'persistentvolumeclaims' ? 'PersistentVolumeClaim' : 'PersistentVolume';
    const result = resultOf({
      scope: typeof namespace === 'string' && namespace ? { namespace } : 'cluster',
      message: `${kind} ${name}: ${event.msg}`,
    });
    results = mergeResults(
      results,
      event.level === 'error' ? { errors: result, warnings: {} } : { errors: {}, warnings: result },
    );
  }
  return results;
}
