/** Reads a backup tarball from an object store: entry names in order, and their contents. */
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import type { ObjectStore } from '../../../shared/ports/object-store.js';

export interface Archive {
  readonly names: string[];
  readonly contents: Map<string, string>;
}

export async function readArchive(store: ObjectStore, key: string): Promise<Archive> {
  const body = await store.get(key);
  if (!body) throw new Error(`no archive at ${key}`);
  const names: string[] = [];
  const contents = new Map<string, string>();
  const ex = extract();
  Readable.from([Buffer.from(body)])
    .pipe(createGunzip())
    .pipe(ex);
  for await (const entry of ex) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    names.push(entry.header.name);
    contents.set(entry.header.name, Buffer.concat(chunks).toString('utf8'));
  }
  return { names, contents };
}

/** `resources/pods/namespaces/ns/name.json` → `pods/ns/name`; preferred-version copies and metadata skipped. */
export function itemsIn(archive: Archive): Set<string> {
  const out = new Set<string>();
  for (const name of archive.names) {
    const m = /^resources\/([^/]+)\/(?:namespaces\/([^/]+)|cluster)\/(.+)\.json$/.exec(name);
    if (m) out.add(`${m[1]}/${m[2] ?? ''}/${m[3]}`);
  }
  return out;
}
