/**
 * Deleting a backup, in Velero's order (backup_deletion_controller.go): its native snapshots
 * (those volumes-info and the volume snapshots file name, and any snapshot tagged with the
 * backup, so a failed run's are found too), its data-mover manifests in the repository (those
 * volumes-info names, and every manifest named after the backup), then `backups/<name>/` with
 * `velero-backup.json` first (the backup stops being listed before its files go) and the name's
 * claim last, so the name can be used again. Then the repository's garbage collection frees the
 * packs no other manifest references, and reports the bytes freed.
 *
 * A backup whose run died (its claim's lease ran out with no `velero-backup.json`) is first
 * recorded Failed (abandoned-backup.ts), then deleted like any other, with what the dead run left
 * half-written. Re-runnable: what is gone already is skipped. When a snapshot cannot be deleted
 * the backup's objects are kept (as Velero keeps the Backup when deletion has errors), so a later run can
 * finish the job. Never deletes a snapshot or manifest another backup names.
 */
import * as z from 'zod';
import { readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import {
  BackupInProgress,
  BackupRetained,
  LifeboatError,
  StoredFileUnreadable,
} from '../../shared/domain/errors.js';
import { backupKeys, repositoryKeyId, repositoryKeys } from '../../shared/domain/storage/keys.js';
import { backupFile, type StoredFile } from '../../shared/domain/storage/stored-files.js';
import { manifestIdsOfBackup } from '../../shared/domain/volumes/data-movement.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { GcReport } from '../../shared/ports/repository.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { settleAbandonedBackup } from '../record-backup-failure/abandoned-backup.js';

export interface DeleteBackupDeps {
  readonly store: ObjectStore;
  /** EC2 of the backup's snapshots; unset, snapshots are left and the backup is kept, saying so. */
  readonly snapshotter?: Snapshotter;
  /** The repository's garbage collection (the data mover's gc job); unset, none runs. */
  readonly collectGarbage?: () => Promise<GcReport>;
  /** What time it is: when a claim's lease ran out, an Object Lock retention ends (default: the system's clock). */
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

export interface DeleteBackupResult {
  readonly name: string;
  /** False when nothing of the backup exists. */
  readonly found: boolean;
  /** True once the backup's objects are gone. */
  readonly deleted: boolean;
  readonly snapshotsDeleted: readonly string[];
  readonly manifestsDeleted: readonly string[];
  readonly objectsDeleted: number;
  /** Why something could not be deleted. */
  readonly errors: readonly string[];
  readonly gc?: GcReport;
}

type Json = Record<string, unknown>;

/**
 * One of the backup's lists of volumes, read within its limits; empty when absent or unreadable
 * (an unreadable one names nothing to delete: its snapshots are left, never guessed at).
 */
async function volumeList(store: ObjectStore, file: StoredFile, signal?: AbortSignal): Promise<unknown[]> {
  try {
    const list = await readStoredJson(store, file, {
      // Velero writes an empty list as null.
      schema: z.array(z.unknown()).nullable(),
      shape: 'a list',
      ...(signal ? { signal } : {}),
    });
    return list ?? [];
  } catch (error) {
    if (error instanceof StoredFileUnreadable) return [];
    throw error;
  }
}

const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const EBS_SNAPSHOT = /^snap-[0-9a-f]+$/;
/** Velero's phases of a backup still running (its deletion controller refuses those too). */
const RUNNING_PHASES = new Set([
  'New',
  'InProgress',
  'Finalizing',
  'FinalizingPartiallyFailed',
  'WaitingForPluginOperations',
  'WaitingForPluginOperationsPartiallyFailed',
]);

/**
 * The backup is still running: its claim is held and no `velero-backup.json` is written yet (and no
 * deletion started), or that file says a running phase.
 */
async function stillRunning(
  store: ObjectStore,
  name: string,
  claimed: boolean,
  signal?: AbortSignal,
): Promise<boolean> {
  const keys = backupKeys(name);
  const raw = await store.get(keys.metadata, signal ? { signal } : {});
  // A claim without velero-backup.json is a run not finished, or a deletion stopped midway.
  if (!raw) return claimed && !(await store.exists(keys.deletion, signal ? { signal } : {}));
  try {
    const phase = record(record(JSON.parse(Buffer.from(raw).toString('utf8'))).status).phase;
    return typeof phase === 'string' && RUNNING_PHASES.has(phase);
  } catch {
    return false;
  }
}

/** The EBS snapshots and repository manifests the backup's volume files name. */
async function namedData(
  store: ObjectStore,
  name: string,
  signal?: AbortSignal,
): Promise<{ snapshots: Set<string>; manifests: Set<string> }> {
  const snapshots = new Set<string>();
  const manifests = new Set<string>();
  for (const info of (await volumeList(store, backupFile(name, 'volumeInfo'), signal)).map(record)) {
    const moved = record(info.snapshotDataMovementInfo);
    for (const id of [
      text(record(info.nativeSnapshotInfo).snapshotHandle),
      text(record(info.csiSnapshotInfo).snapshotHandle),
      text(moved.retainedSnapshot),
    ])
      if (EBS_SNAPSHOT.test(id)) snapshots.add(id);
    // Lifeboat's own movements only: Velero's kopia snapshots live in its own repository.
    if (moved.dataMover === 'lifeboat' && text(moved.snapshotHandle))
      manifests.add(text(moved.snapshotHandle));
    const pvb = record(info.pvbInfo);
    if (text(pvb.uploaderType).startsWith('lifeboat') && text(pvb.snapshotHandle))
      manifests.add(text(pvb.snapshotHandle));
  }
  for (const snapshot of (await volumeList(store, backupFile(name, 'volumeSnapshots'), signal)).map(record)) {
    const id = text(record(snapshot.status).providerSnapshotID);
    if (EBS_SNAPSHOT.test(id)) snapshots.add(id);
  }
  return { snapshots, manifests };
}

/** What one deletion works with: the backup's name and keys, and where to reach its data. */
interface Deletion {
  readonly name: string;
  readonly keys: ReturnType<typeof backupKeys>;
  readonly deps: DeleteBackupDeps;
  readonly withSignal: { signal?: AbortSignal };
}

/** Marks the deletion as started, so an interrupted one is not taken for a running backup. */
async function markDeletionStarted(deletion: Deletion): Promise<void> {
  const { name, keys, deps, withSignal } = deletion;
  await deps.store.put(keys.deletion, JSON.stringify({ name, startedAt: new Date().toISOString() }), {
    contentType: 'application/json',
    ...withSignal,
  });
}

/** Deletes the backup's EBS snapshots; one that cannot be deleted is an error, the rest go on. */
async function deleteSnapshots(
  deletion: Deletion,
  snapshots: Set<string>,
): Promise<{ snapshotsDeleted: string[]; errors: string[] }> {
  const { name, deps, withSignal } = deletion;
  const errors: string[] = [];
  if (deps.snapshotter) {
    // A failed run's snapshots are in no file: found by the tag every backup snapshot carries.
    for (const s of await deps.snapshotter.findSnapshots({
      tags: [{ key: 'velero.io/backup', value: name }],
      ...withSignal,
    }))
      snapshots.add(s.snapshotId);
  }
  const snapshotsDeleted: string[] = [];
  for (const snapshotId of [...snapshots].sort()) {
    if (!deps.snapshotter) {
      errors.push(`snapshot ${snapshotId} is kept: no EC2 access to delete it`);
      continue;
    }
    try {
      await deps.snapshotter.deleteSnapshot(snapshotId, withSignal);
      snapshotsDeleted.push(snapshotId);
    } catch (error) {
      if (!(error instanceof LifeboatError)) throw error;
      errors.push(`snapshot ${snapshotId} could not be deleted: ${error.message}`);
    }
  }
  return { snapshotsDeleted, errors };
}

/** Deletes the backup's manifests still in the repository: those its files name and those named after it. */
async function deleteManifests(deletion: Deletion, manifests: Set<string>): Promise<string[]> {
  const { name, deps, withSignal } = deletion;
  const { store } = deps;
  const stored = (await store.list(repositoryKeys.snapshotsDir, withSignal)).map(repositoryKeyId);
  for (const id of manifestIdsOfBackup({ manifestIds: stored, backupName: name })) manifests.add(id);
  const present = new Set(stored);
  const manifestsDeleted: string[] = [];
  for (const id of [...manifests].sort()) {
    if (!present.has(id)) continue;
    await store.delete(repositoryKeys.snapshot(id), withSignal);
    manifestsDeleted.push(id);
  }
  return manifestsDeleted;
}

/** Deletes `backups/<name>/`, `velero-backup.json` first, then the name's claim; the count of objects deleted. */
async function deleteBackupObjects(
  deletion: Deletion,
  found: { objects: readonly string[]; claimed: boolean },
): Promise<number> {
  const { keys, deps, withSignal } = deletion;
  const { objects } = found;
  let objectsDeleted = 0;
  // velero-backup.json first: from then on the backup is not listed, whatever is left.
  const ordered = [keys.metadata, ...objects.filter((k) => k !== keys.metadata)];
  for (const key of ordered) {
    if (!objects.includes(key)) continue;
    await deps.store.delete(key, withSignal);
    objectsDeleted++;
  }
  await deps.store.removeTemporaries?.(keys.dir);
  if (found.claimed) await deps.store.delete(keys.claim, withSignal);
  await deps.store.delete(keys.deletion, withSignal);
  return objectsDeleted;
}

export async function deleteBackup(
  input: { name: string },
  deps: DeleteBackupDeps,
): Promise<DeleteBackupResult> {
  const { name } = input;
  const { store, signal } = deps;
  const withSignal = signal ? { signal } : {};
  const keys = backupKeys(name);
  const deletion: Deletion = { name, keys, deps, withSignal };
  // A backup whose run died is recorded Failed first: then it is deleted like any other.
  await settleAbandonedBackup({ name }, { store, clock: deps.clock ?? systemClock, ...withSignal });
  const objects = await store.list(keys.dir, withSignal);
  const claimed = await store.exists(keys.claim, withSignal);
  const empty = { snapshotsDeleted: [], manifestsDeleted: [], objectsDeleted: 0, errors: [] };
  if (objects.length === 0 && !claimed) return { name, found: false, deleted: false, ...empty };
  // Nothing is deleted under a running backup: it would write its files back, or name deleted data.
  if (await stillRunning(store, name, claimed, signal)) throw new BackupInProgress(name);
  // Object Lock: nothing is deleted (not even a marker hiding it) before the backup's retention ends.
  const retention = await store.retentionOf?.(keys.metadata, withSignal);
  if (retention && retention.until.getTime() > (deps.clock?.now() ?? new Date()).getTime())
    throw new BackupRetained(name, retention);
  await markDeletionStarted(deletion);

  const { snapshots, manifests } = await namedData(store, name, signal);
  const { snapshotsDeleted, errors } = await deleteSnapshots(deletion, snapshots);
  const manifestsDeleted = await deleteManifests(deletion, manifests);
  // A snapshot left keeps the backup's objects, so a later run can finish the job.
  const objectsDeleted = errors.length === 0 ? await deleteBackupObjects(deletion, { objects, claimed }) : 0;
  const hasRepository = await store.exists(repositoryKeys.format, withSignal);
  const gc = deps.collectGarbage && hasRepository ? await deps.collectGarbage() : undefined;
  return {
    name,
    found: true,
    deleted: errors.length === 0,
    snapshotsDeleted,
    manifestsDeleted,
    objectsDeleted,
    errors,
    ...(gc ? { gc } : {}),
  };
}
