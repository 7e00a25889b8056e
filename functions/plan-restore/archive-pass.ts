/**
 * PlanRestore's pass over the backup archive: each backed-up item is first placed where its path
 * says (its namespace, whatever its metadata claims: shared/domain/restore/placement.ts), then
 * skipped (as Velero skips it), kept for later (namespaces, CRDs, volumes waiting for their
 * decisions), or selected and planned at once in its restore step. Hostile archives fail in the
 * reader, before anything is created. Writes only the planned chunks.
 */
import { type ArchiveItem, readBackupArchive } from '../../shared/adapters/backup-archive-reader.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { prepareForRestore, skipNotice } from '../../shared/domain/restore/item.js';
import { restorable } from '../../shared/domain/restore/order.js';
import { placedAtPath } from '../../shared/domain/restore/placement.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import { itemKey } from './plan-recipe.js';
import { CRDS, type Planning } from './planning.js';
import { selects } from './selection.js';
import { noteBackedUp } from './unmatched.js';

export async function readArchiveItems(planning: Planning): Promise<void> {
  const { run } = planning;
  const body = await planning.deps.store.getStream(backupKeys(run.backupName).contents);
  if (!body) throw new LifeboatError(`the backup ${run.backupName} has no contents`);
  await readBackupArchive({ body, onItem: (entry) => takeEntry(planning, entry) });
}

/** What Velero never restores: counted, and a selected one noted with Velero's log line. */
function notRestored(planning: Planning, entry: ArchiveItem): boolean {
  const { found } = planning;
  const gr = entry.groupResource;
  const notice = restorable(gr) ? skipNotice(gr, entry.object) : 'not restorable';
  if (notice === undefined) return false;
  found.skipped++;
  if (restorable(gr) && selects(planning.selection, entry))
    found.notRestored.push({ groupResource: gr, namespace: entry.namespace, name: entry.name, notice });
  return true;
}

async function takeEntry(planning: Planning, read: ArchiveItem): Promise<void> {
  // Velero reads the plain path; the version folders are copies.
  if (read.version) return;
  noteBackedUp(planning, read);
  const { found } = planning;
  const placed = placedAtPath(read);
  const entry = { ...read, object: placed.object };
  if (placed.warning)
    found.placementWarnings.set(itemKey(read.groupResource, read.namespace, read.name), placed.warning);
  const gr = entry.groupResource;
  if (notRestored(planning, entry)) return;
  if (gr === 'namespaces') {
    found.namespaceObjects.set(entry.name, {
      groupResource: gr,
      sourceNamespace: '',
      object: prepareForRestore(entry.object, { ...planning.prepareOptions, groupResource: gr }),
    });
    return;
  }
  if (gr === CRDS) {
    found.crdCandidates.set(
      entry.name,
      planning.planItem({ groupResource: gr, sourceNamespace: '', object: entry.object }),
    );
    return;
  }
  if (!selects(planning.selection, entry)) return;
  const { recipe } = planning;
  const step = recipe ? recipe.stepOf(itemKey(gr, entry.namespace, entry.name)) : planning.firstStep;
  if (step === undefined) {
    found.notInRecipe++;
    return;
  }
  // The earliest step restoring a custom resource of each kind, and something in each namespace.
  if (gr.includes('.'))
    found.customResourcesSelected.set(gr, Math.min(found.customResourcesSelected.get(gr) ?? step, step));
  if (entry.namespace)
    found.namespacesNeeded.set(
      entry.namespace,
      Math.min(found.namespacesNeeded.get(entry.namespace) ?? step, step),
    );
  if (planning.volumes.holds(gr)) {
    found.volumeSteps.set(itemKey(gr, entry.namespace, entry.name), step);
    planning.volumes.hold({ groupResource: gr, sourceNamespace: entry.namespace, object: entry.object });
    return;
  }
  planning.chunks.add(
    planning.planItem({ groupResource: gr, sourceNamespace: entry.namespace, object: entry.object }),
    step,
  );
  await planning.chunks.flush();
}
