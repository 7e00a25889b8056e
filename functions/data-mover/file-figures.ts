/**
 * File mode, backup: the run's figures (progress, counts) and the manifest they end up in.
 * Never: a figure the manifest records that the writer did not measure.
 */
import type { Clock } from '../../shared/ports/clock.js';
import type { BlobId, SnapshotManifest, WriteStats } from '../../shared/ports/repository.js';

export interface Counters {
  bytesTotal: number;
  filesTotal: number;
  bytesDone: number;
  filesDone: number;
  bytesRead: number;
  totalBytes: number;
  files: number;
  directories: number;
  symlinks: number;
  hardLinks: number;
  filesUnchanged: number;
  chunks: number;
  chunksDeduplicated: number;
}

export function zeroCounters(): Counters {
  return {
    bytesTotal: 0,
    filesTotal: 0,
    bytesDone: 0,
    filesDone: 0,
    bytesRead: 0,
    totalBytes: 0,
    files: 0,
    directories: 0,
    symlinks: 0,
    hardLinks: 0,
    filesUnchanged: 0,
    chunks: 0,
    chunksDeduplicated: 0,
  };
}

/** The manifest of a finished backup, with the run's figures. */
export function fileManifestOf(backup: {
  manifestId: string;
  clock: Clock;
  tags?: Readonly<Record<string, string>> | undefined;
  rootTree: BlobId;
  figures: Counters;
  writes: WriteStats;
}): SnapshotManifest {
  const { figures, writes } = backup;
  return {
    kind: 'file',
    id: backup.manifestId,
    createdAt: backup.clock.now().toISOString(),
    tags: backup.tags ?? {},
    root: backup.rootTree,
    stats: {
      totalBytes: figures.totalBytes,
      bytesRead: figures.bytesRead,
      rawBytesStored: writes.rawBytes,
      storedBytes: writes.storedBytes,
      blobsDeduplicated: writes.blobsDeduplicated,
    },
  };
}
