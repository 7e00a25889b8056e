/**
 * What the backup's workers record of each volume they decide on, block by block: the input of
 * the backup's volume results (backup-results.ts). Types only, so the results' parts
 * (backup-results.ts, movement-results.ts) share them without importing each other.
 */
import type { ClaimFacts, PersistentVolumeFacts } from './info.js';
import type { VolumeOperationSpec } from './operations.js';
import type { VolumeDecision } from './policy.js';

/** A worker's record of one volume it decided on (and the snapshot it started, if any). */
export interface HandledVolumeFacts {
  readonly pvName?: string;
  readonly pvcNamespace?: string;
  readonly pvcName?: string;
  readonly decision: VolumeDecision;
  readonly native?: {
    readonly volumeId: string;
    readonly volumeType: string;
    readonly iops?: number;
    readonly availabilityZone: string;
    readonly snapshotId?: string;
  };
  readonly csi?: {
    readonly volumeSnapshotNamespace: string;
    readonly volumeSnapshotName?: string;
    readonly driver: string;
  };
  readonly error?: string;
  readonly startedAt?: string;
  readonly operation?: VolumeOperationSpec;
  /** fs-backup: the directory the data mover reads the volume's files from. */
  readonly files?: { readonly path: string; readonly nodeName?: string };
  /** fs-backup: why the data mover cannot reach the volume's files. */
  readonly filesUnreachable?: string;
}

export interface BlockVolumeFacts {
  readonly claims: readonly ClaimFacts[];
  readonly persistentVolumes: readonly PersistentVolumeFacts[];
  readonly handled: readonly HandledVolumeFacts[];
}
