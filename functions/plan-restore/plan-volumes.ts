/**
 * PlanRestore's volume part: reads the backup's `<backup>-volumeinfo.json.gz`, holds the
 * selected PVs and PVCs back while the archive streams (a PVC's fate depends on its PV's, and
 * the archive has PVCs first), asks the target cluster which of them exist, and decides each
 * volume by the pure rules of shared/domain/restore-volumes. A backup with no volumes-info (or an
 * empty one, as backups written before volumes-info) is planned as before: nothing is held.
 * Never creates anything; RestoreVolumes creates the volumes.
 */
import { createHash } from 'node:crypto';
import { readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import type { RestoreSpec } from '../../shared/contracts/restore-request.js';
import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import { backupVolumeInfos, type VolumePlan } from '../../shared/contracts/restore-volumes.js';
import { mappedNamespace } from '../../shared/domain/restore/item.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { backupFile } from '../../shared/domain/storage/stored-files.js';
import { movedByLifeboat } from '../../shared/domain/volumes/data-movement.js';
import type { BackupVolumeInfo } from '../../shared/domain/volumes/info-shapes.js';
import { planVolumeRestore } from '../../shared/domain/volumes/restore.js';
import type { VolumeRestorePlan } from '../../shared/domain/volumes/restore-plan.js';
import type { VolumeHome } from '../../shared/domain/volumes/snapshot-copies.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

type Json = Record<string, unknown>;

const PVS = 'persistentvolumes';
const PVCS = 'persistentvolumeclaims';

/**
 * The backup's volumes-info; empty when the backup has none (written before it existed). Read
 * within its limits: Velero fails the restore when it cannot read the file; so does Lifeboat,
 * naming it (StoredFileUnreadable).
 */
export async function loadBackupVolumeInfos(options: {
  store: ObjectStore;
  backupName: string;
  signal?: AbortSignal;
}): Promise<BackupVolumeInfo[]> {
  const infos = await readStoredJson(options.store, backupFile(options.backupName, 'volumeInfo'), {
    schema: backupVolumeInfos,
    shape: 'a list of volumes',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return (infos ?? []) as BackupVolumeInfo[];
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A UUID-shaped name part derived from a hash, so a retried PlanRestore names a PV alike. */
function uuidOf(text: string): string {
  const h = sha256(text);
  const variant = ((Number.parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface HeldItem {
  readonly groupResource: string;
  readonly sourceNamespace: string;
  readonly object: Json;
}

export interface VolumePlanner {
  /** Whether a selected item waits for the volume decisions instead of being planned now. */
  holds(groupResource: string): boolean;
  hold(item: HeldItem): void;
  /**
   * The held PVs and PVCs rewritten, the VolumeSnapshotContents and VolumeSnapshots to create
   * (`generated`: not backed-up objects, so no resource modifiers), and the plan for the volume
   * steps.
   */
  finish(): Promise<{ items: HeldItem[]; generated: HeldItem[]; plan: VolumePlan }>;
}

interface VolumePlannerOptions {
  readonly run: RestoreRun;
  readonly spec: RestoreSpec;
  readonly infos: readonly BackupVolumeInfo[];
  readonly cluster: ClusterWriter;
  readonly now: () => Date;
  readonly signal?: AbortSignal;
  /** A DR deployment's own account and region (PlanRestoreDeps.volumeHome). */
  readonly deploymentHome?: VolumeHome;
}

export function volumePlanner(options: VolumePlannerOptions): VolumePlanner {
  const held: HeldItem[] = [];
  const active = options.infos.length > 0;
  return {
    holds: (groupResource) => active && (groupResource === PVS || groupResource === PVCS),
    hold: (item) => {
      held.push(item);
    },
    finish: () => finishVolumePlan({ ...options, held }),
  };
}

const nameOf = (o: Json): string => String((o.metadata as { name?: unknown } | undefined)?.name ?? '');
const namespaceOf = (o: Json): string =>
  String((o.metadata as { namespace?: unknown } | undefined)?.namespace ?? '');

/** The held PVs and PVCs decided, with what the volume steps create and the plan they follow. */
async function finishVolumePlan(
  options: VolumePlannerOptions & { held: readonly HeldItem[] },
): ReturnType<VolumePlanner['finish']> {
  const { run, spec, infos, held } = options;
  const pvs = held.filter((i) => i.groupResource === PVS).map((i) => i.object);
  const pvcs = held.filter((i) => i.groupResource === PVCS).map((i) => i.object);
  const existing = await existingVolumes({ ...options, pvs, pvcs });
  const decided = planVolumeRestore({
    infos,
    pvs,
    pvcs,
    ...(spec.restorePVs !== undefined ? { restorePVs: spec.restorePVs } : {}),
    ...(spec.namespaceMapping ? { namespaceMapping: spec.namespaceMapping } : {}),
    ...(spec.volumeAvailabilityZone ? { availabilityZone: spec.volumeAvailabilityZone } : {}),
    ...volumeHomeOf(spec, options.deploymentHome),
    ...existing,
    names: {
      // Velero: `velero-clone-` and a UUID; derived here so a retried plan agrees with itself.
      clone: (pvName) => `velero-clone-${uuidOf(`${run.name}/${pvName}`)}`,
      // Velero GenerateSha256FromRestoreUIDAndVsName: the hex SHA-256 of the restore and the
      // snapshot; Lifeboat restores have no UID, and hash the PVC's namespace and name.
      snapshot: (pvc) => sha256(`${run.name}/${pvc.namespace}/${pvc.name}`),
    },
  });
  return {
    items: [
      ...decided.pvs.map((object) => ({ groupResource: PVS, sourceNamespace: '', object })),
      ...decided.pvcs.map((object) => ({
        groupResource: PVCS,
        sourceNamespace: namespaceOf(object),
        object,
      })),
    ],
    generated: decided.snapshots.map((s) => ({
      groupResource: s.groupResource,
      sourceNamespace: namespaceOf(s.object),
      object: s.object,
    })),
    plan: volumePlanOf({ decided, run, time: options.now().toISOString() }),
  };
}

/**
 * Where the restore's volumes land when the request sends them to another region or account:
 * the region it names, the account of the role it names (else the backup's own). In a DR
 * deployment (`deployment`: its own account and region) they land elsewhere by definition: in
 * its own account and region unless the request names others. Native and CSI snapshots come
 * back there only from their copies (copySnapshots).
 */
export function volumeHomeOf(
  spec: Pick<RestoreSpec, 'volumeRegion' | 'volumeAccountRoleArn'>,
  deployment?: VolumeHome,
): {
  elsewhere?: true;
  home?: VolumeHome;
} {
  if (!spec.volumeRegion && !spec.volumeAccountRoleArn && !deployment) return {};
  const account =
    /^arn:aws[a-z-]*:iam::(\d{12}):role\//.exec(spec.volumeAccountRoleArn ?? '')?.[1] ?? deployment?.account;
  const region = spec.volumeRegion ?? deployment?.region;
  return {
    elsewhere: true,
    home: { ...(account ? { account } : {}), ...(region ? { region } : {}) },
  };
}

/** Which of the held volumes the target cluster has already, asked one by one. */
async function existingVolumes(
  options: VolumePlannerOptions & { pvs: readonly Json[]; pvcs: readonly Json[] },
): Promise<{ existingPvs: Set<string>; existingPvcs: Set<string> }> {
  const { cluster, infos } = options;
  const signal = options.signal ? { signal: options.signal } : {};
  // Only volumes re-created before the phases (from a native snapshot, or from the data
  // mover's repository) depend on whether the PV is there already (Velero GH #609).
  const native = new Set(
    infos.filter((i) => i.backupMethod === 'NativeSnapshot' || movedByLifeboat(i)).map((i) => i.pvName),
  );
  const existingPvs = new Set<string>();
  for (const name of options.pvs.map(nameOf).filter((n) => native.has(n))) {
    const found = await cluster.read({
      resource: PVS,
      object: { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name } },
      ...signal,
    });
    if (found) existingPvs.add(name);
  }
  const existingPvcs = new Set<string>();
  for (const pvc of options.pvcs) {
    const namespace = mappedNamespace(namespaceOf(pvc), options.spec.namespaceMapping);
    const name = nameOf(pvc);
    const found = await cluster.read({
      resource: PVCS,
      object: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace } },
      ...signal,
    });
    if (found) existingPvcs.add(`${namespace}/${name}`);
  }
  return { existingPvs, existingPvcs };
}

function volumePlanOf(options: { decided: VolumeRestorePlan; run: RestoreRun; time: string }): VolumePlan {
  const { decided } = options;
  const log: LogEvent[] = decided.notes.map((n) => ({
    time: options.time,
    level: n.level,
    msg: n.message,
    fields: {
      restore: options.run.name,
      resource: n.namespace === undefined ? PVS : PVCS,
      ...(n.namespace === undefined ? {} : { namespace: n.namespace }),
      name: n.name,
    },
  }));
  return {
    native: decided.native.map((n) => ({ ...n })),
    provisioned: decided.provisioned.map((p) => ({ ...p, pvInfo: { ...p.pvInfo } })),
    restoreInfos: decided.restoreInfos.map((i) => ({ ...i })),
    log,
  };
}
