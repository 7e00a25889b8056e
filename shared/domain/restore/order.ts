/**
 * The order of a restore (Velero 1.17 restore priorities, pkg/cmd/server/config/config.go):
 * CRDs first, then the high-priority resources in their order, every other resource of the
 * backup alphabetically, then the low-priority ones. Each resource is a phase; Lifeboat restores
 * the items of a phase in parallel, phases one after another. Some resources are never restored.
 * Names are group-resources as the tarball's folders spell them.
 */

export const HIGH_PRIORITY: readonly string[] = [
  'customresourcedefinitions.apiextensions.k8s.io',
  'namespaces',
  'storageclasses.storage.k8s.io',
  'volumesnapshotclasses.snapshot.storage.k8s.io',
  'volumesnapshotcontents.snapshot.storage.k8s.io',
  'volumesnapshots.snapshot.storage.k8s.io',
  'datauploads.velero.io',
  'persistentvolumes',
  'persistentvolumeclaims',
  'clusterroles.rbac.authorization.k8s.io',
  'roles.rbac.authorization.k8s.io',
  'serviceaccounts',
  'clusterrolebindings.rbac.authorization.k8s.io',
  'rolebindings.rbac.authorization.k8s.io',
  'secrets',
  'configmaps',
  'limitranges',
  'priorityclasses.scheduling.k8s.io',
  'pods',
  'replicasets.apps',
  'clusterclasses.cluster.x-k8s.io',
  'endpoints',
  'services',
];

export const LOW_PRIORITY: readonly string[] = [
  'clusterbootstraps.run.tanzu.vmware.com',
  'clusters.cluster.x-k8s.io',
  'clusterresourcesets.addons.cluster.x-k8s.io',
  'apps.kappctrl.k14s.io',
  'packageinstalls.packaging.carvel.dev',
];

/** Velero's nonRestorableResources. */
export const NON_RESTORABLE: readonly string[] = [
  'nodes',
  'events',
  'events.events.k8s.io',
  'backups.velero.io',
  'restores.velero.io',
  'resticrepositories.velero.io',
  'csinodes.storage.k8s.io',
  'volumeattachments.storage.k8s.io',
  'backuprepositories.velero.io',
];

export function restorable(groupResource: string): boolean {
  return !NON_RESTORABLE.includes(groupResource);
}

/** The phases of a restore: the backup's restorable group-resources, in restore order. */
export function restorePhases(groupResources: Iterable<string>): string[] {
  const present = new Set([...groupResources].filter(restorable));
  const high = HIGH_PRIORITY.filter((gr) => present.has(gr));
  const low = LOW_PRIORITY.filter((gr) => present.has(gr));
  const rest = [...present].filter((gr) => !HIGH_PRIORITY.includes(gr) && !LOW_PRIORITY.includes(gr)).sort();
  return [...high, ...rest, ...low];
}
