/** Writes tar entries (tar-stream) into one buffer, as Velero writes them: regular files, mode 0755. */
import { pack } from 'tar-stream';

export interface TarEntry {
  readonly name: string;
  readonly body: string | Uint8Array;
}

/** A complete tar archive (with its end-of-archive blocks) of the entries, in order. */
export async function tarOf(entries: Iterable<TarEntry>, options: { mtime: Date }): Promise<Uint8Array> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: unknown) => chunks.push(Buffer.from(chunk as Uint8Array)));
  const ended = new Promise<void>((resolve, reject) => {
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  for (const entry of entries) {
    archive.entry(
      { name: entry.name, mode: 0o755, mtime: options.mtime, type: 'file' },
      Buffer.from(entry.body),
    );
  }
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}
