/** How a backup's deletion is printed, the same from `--local` and from the API's DeleteBackupRequest. */
import type { GcReport } from '../../shared/ports/repository.js';
import type { Io } from '../verb-call.js';

export interface DeletionShown {
  readonly deleted: boolean;
  readonly snapshotsDeleted: readonly string[];
  readonly manifestsDeleted: readonly string[];
  readonly objectsDeleted: number;
  readonly errors: readonly string[];
  readonly gc?: Partial<GcReport>;
}

export function printDeletion(deletion: {
  readonly name: string;
  readonly result: DeletionShown;
  readonly io: Io;
}): void {
  const { name, result, io } = deletion;
  for (const error of result.errors) io.err.write(`${error}\n`);
  io.out.write(
    `Backup "${name}": ${result.deleted ? 'deleted' : 'kept (see the errors above; run the command again)'}: ${result.snapshotsDeleted.length} snapshots, ${result.manifestsDeleted.length} repository manifests, ${result.objectsDeleted} objects.\n`,
  );
  if (result.gc) {
    const gc = result.gc;
    const repacked =
      (gc.packsRepacked ?? 0) > 0
        ? ` (${gc.packsRepacked} partly dead packs repacked: ${gc.blobsCopied} live blobs, ${gc.bytesCopied} bytes copied)`
        : '';
    io.out.write(
      `Repository garbage collection: ${gc.packsDeleted ?? 0} packs deleted, ${gc.bytesFreed ?? 0} bytes freed${repacked}; ${gc.liveManifests ?? 0} manifests of other backups kept.\n`,
    );
  }
}
