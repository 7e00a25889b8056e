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

export interface FileBackupProgress {
  readonly bytesDone: number;
  /**
   * Sum of the regular files' sizes: measured before reading, or (with a parent, or `measure`
   * false) estimated from the parent's total and what the walk has found so far.
   */
  readonly bytesTotal: number;
  readonly filesDone: number;
  /** Measured before reading, or the regular files the walk has found so far. */
  readonly filesTotal: number;
  /** The totals are final: measured, or the walk is over. */
  readonly totalKnown: boolean;
}

/** What the walk found, files with several names once: the totals unless measured first. */
export interface WalkFound {
  bytes: number;
  files: number;
  /** Stands in for the bytes until the walk is over (a re-run: the parent's total). */
  estimate: number;
  measured: boolean;
  walked: boolean;
}

/** The progress figures: measured totals, or the walk's (at least the estimate until it is over). */
export function progressOf(c: Counters, found: WalkFound): FileBackupProgress {
  const bytesTotal = found.measured
    ? c.bytesTotal
    : found.walked
      ? found.bytes
      : Math.max(found.estimate, found.bytes);
  const filesTotal = found.measured ? c.filesTotal : found.files;
  return {
    bytesDone: c.bytesDone,
    bytesTotal: Math.max(bytesTotal, c.bytesDone),
    filesDone: c.filesDone,
    filesTotal: Math.max(filesTotal, c.filesDone),
    totalKnown: found.measured || found.walked,
  };
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
