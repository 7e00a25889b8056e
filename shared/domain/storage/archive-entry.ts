/**
 * What an entry name of a backup tarball means, and which names a restore refuses.
 * Velero 1.x writes `resources/<gr>/namespaces/<ns>/<name>.json` and `resources/<gr>/cluster/<name>.json`,
 * format 1.1.0 adds `resources/<gr>/<version>-preferredversion/…` (and `<version>/…` for other
 * versions). A name that is absolute, climbs with `..`, or is otherwise odd is hostile.
 */

export type ArchiveEntry =
  | { readonly kind: 'version' }
  | {
      readonly kind: 'item';
      readonly groupResource: string;
      /** The API version folder (`v1-preferredversion` → `v1`, preferred: true); absent for the plain path. */
      readonly version?: { readonly name: string; readonly preferred: boolean };
      readonly namespace: string;
      readonly name: string;
    }
  | { readonly kind: 'other' };

const SEGMENT = /^[A-Za-z0-9._:-][A-Za-z0-9._:@-]*$/;

/** Why a name is refused, or undefined when it is safe to read. */
export function hostileName(name: string): string | undefined {
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'an absolute path';
  if (name.includes('\\')) return 'a backslash in the path';
  if (name.includes('\0')) return 'a NUL byte in the path';
  const parts = name.split('/');
  if (parts.some((p) => p === '..')) return 'a path that climbs out with ".."';
  if (name.length > 1024) return 'a path over 1024 characters';
  return undefined;
}

/**
 * The path an entry name stands for: `./resources/x.json` and `resources/x.json` are one path
 * (two entries for it are a duplicate, which a restore refuses).
 */
export function entryPath(name: string): string {
  return name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
}

export function parseEntryName(name: string): ArchiveEntry {
  const clean = entryPath(name);
  if (clean === 'metadata/version') return { kind: 'version' };
  const parts = clean.split('/');
  if (parts[0] !== 'resources' || !parts.every((p) => SEGMENT.test(p))) return { kind: 'other' };
  let rest = parts.slice(2);
  const groupResource = parts[1] ?? '';
  let version: { name: string; preferred: boolean } | undefined;
  const first = rest[0] ?? '';
  if (first !== 'namespaces' && first !== 'cluster') {
    const preferred = first.endsWith('-preferredversion');
    version = { name: preferred ? first.slice(0, -'-preferredversion'.length) : first, preferred };
    rest = rest.slice(1);
  }
  const file = rest.at(-1) ?? '';
  if (!file.endsWith('.json')) return { kind: 'other' };
  const itemName = file.slice(0, -'.json'.length);
  if (rest[0] === 'cluster' && rest.length === 2) {
    return { kind: 'item', groupResource, ...(version ? { version } : {}), namespace: '', name: itemName };
  }
  if (rest[0] === 'namespaces' && rest.length === 3) {
    return {
      kind: 'item',
      groupResource,
      ...(version ? { version } : {}),
      namespace: rest[1] ?? '',
      name: itemName,
    };
  }
  return { kind: 'other' };
}
