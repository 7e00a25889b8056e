/**
 * Which VolumeSnapshotClass a CSI snapshot uses, chosen as Velero chooses it
 * (`pkg/util/csi/volume_snapshot.go` GetVolumeSnapshotClass, 1.17): the backup annotation
 * `velero.io/csi-volumesnapshot-class_<driver>`, then the PVC annotation
 * `velero.io/csi-volumesnapshot-class`, then a class of the driver labelled
 * `velero.io/csi-volumesnapshot-class`, then one annotated
 * `snapshot.storage.kubernetes.io/is-default-class`, then the driver's only class.
 * Pure: never throws; a refusal comes back with Velero's reason.
 */
export const BACKUP_CLASS_ANNOTATION_PREFIX = 'velero.io/csi-volumesnapshot-class';
export const PVC_CLASS_ANNOTATION = 'velero.io/csi-volumesnapshot-class';
export const CLASS_SELECTOR_LABEL = 'velero.io/csi-volumesnapshot-class';
export const DEFAULT_CLASS_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';

export interface SnapshotClassFacts {
  readonly name: string;
  readonly driver: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export type ClassChoice =
  | { readonly ok: true; readonly className: string }
  | { readonly ok: false; readonly reason: string };

function named(options: {
  name: string;
  driver: string;
  classes: readonly SnapshotClassFacts[];
  where: string;
}): ClassChoice {
  const { name, driver, where } = options;
  const found = options.classes.find((c) => c.name.toLowerCase() === name.toLowerCase());
  if (!found)
    return {
      ok: false,
      reason: `No CSI VolumeSnapshotClass found with name ${name} for driver ${driver} (${where})`,
    };
  if (found.driver.toLowerCase() !== driver.toLowerCase())
    return {
      ok: false,
      reason: `Incorrect VolumeSnapshotClass ${found.name} is not for driver ${driver} (${where})`,
    };
  return { ok: true, className: found.name };
}

export function chooseSnapshotClass(options: {
  driver: string;
  classes: readonly SnapshotClassFacts[];
  backupAnnotations?: Readonly<Record<string, string>>;
  pvcAnnotations?: Readonly<Record<string, string>>;
}): ClassChoice {
  const { driver, classes } = options;
  const backupKey = `${BACKUP_CLASS_ANNOTATION_PREFIX}_${driver.toLowerCase()}`;
  const fromBackup = options.backupAnnotations?.[backupKey];
  if (fromBackup !== undefined)
    return named({ name: fromBackup, driver, classes, where: `backup annotation ${backupKey}` });
  const fromPvc = options.pvcAnnotations?.[PVC_CLASS_ANNOTATION];
  if (fromPvc !== undefined)
    return named({ name: fromPvc, driver, classes, where: `PVC annotation ${PVC_CLASS_ANNOTATION}` });
  const ofDriver = classes.filter((c) => c.driver === driver);
  const labelled = ofDriver.find((c) => c.labels?.[CLASS_SELECTOR_LABEL] !== undefined);
  if (labelled) return { ok: true, className: labelled.name };
  const byDefault = ofDriver.find((c) => c.annotations?.[DEFAULT_CLASS_ANNOTATION] !== undefined);
  if (byDefault) return { ok: true, className: byDefault.name };
  const [only, ...more] = ofDriver;
  if (only && more.length === 0) return { ok: true, className: only.name };
  return {
    ok: false,
    reason: `failed to get VolumeSnapshotClass for provisioner ${driver}: ensure that the desired VolumeSnapshotClass has the ${CLASS_SELECTOR_LABEL} label or ${DEFAULT_CLASS_ANNOTATION} annotation, and that its driver matches the StorageClass provisioner`,
  };
}
