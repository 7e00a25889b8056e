/**
 * CSI snapshots through the Kubernetes API (`snapshot.storage.k8s.io/v1`), as Velero's CSI
 * actions use it: list the VolumeSnapshotClasses, create a VolumeSnapshot for a PVC, read it and
 * its VolumeSnapshotContent, keep the content (`deletionPolicy: Retain`) so deleting the
 * VolumeSnapshot never deletes the backup's data, and remove both once the backup has recorded
 * the snapshot handle. Implemented over the cluster by
 * adapters/kubernetes-csi-snapshots.
 */
import type { SnapshotClassFacts } from '../domain/volumes/csi-snapshot-class.js';
import type { VolumeSnapshotContentLook, VolumeSnapshotLook } from '../domain/volumes/operations.js';

export interface CsiSnapshots {
  /** Every VolumeSnapshotClass; undefined when the cluster does not serve the snapshot API. */
  snapshotClasses(options?: { signal?: AbortSignal }): Promise<readonly SnapshotClassFacts[] | undefined>;
  /** Creates the VolumeSnapshot; one already there (an earlier attempt's) is not an error. */
  createVolumeSnapshot(options: {
    namespace: string;
    name: string;
    pvcName: string;
    className: string;
    labels: Readonly<Record<string, string>>;
    signal?: AbortSignal;
  }): Promise<{ created: boolean; creationTimestamp?: string }>;
  readVolumeSnapshot(options: {
    namespace: string;
    name: string;
    signal?: AbortSignal;
  }): Promise<VolumeSnapshotLook>;
  /** Undefined when the content does not exist. */
  readVolumeSnapshotContent(options: {
    name: string;
    signal?: AbortSignal;
  }): Promise<VolumeSnapshotContentLook | undefined>;
  /** Sets the content's deletionPolicy to Retain (Velero does so for the backup's lifetime). */
  retainContent(options: { name: string; signal?: AbortSignal }): Promise<void>;
  /**
   * Removes a finished backup's VolumeSnapshot and its content from the cluster while keeping
   * the storage snapshot (Velero DeleteReadyVolumeSnapshot): the content is set to Retain first,
   * then deleted, then the VolumeSnapshot. What is gone already is not an error.
   */
  deleteVolumeSnapshot(options: {
    namespace: string;
    name: string;
    contentName: string;
    signal?: AbortSignal;
  }): Promise<void>;
}
