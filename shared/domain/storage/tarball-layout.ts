/**
 * Entry names inside a backup tarball, Velero format 1.1.0 (pkg/archive, item_backupper.go):
 * each object at `resources/<group-resource>/namespaces/<ns>/<name>.json` (or `/cluster/`), and
 * the same bytes again under `<version>-preferredversion/` when its version is the server's
 * preferred one.
 */
import { groupResource } from '../kubernetes/api-resources.js';
import type { ItemRef } from '../kubernetes/item-ref.js';

export const FORMAT_VERSION = '1.1.0';
export const VERSION_ENTRY = 'metadata/version';

function scopePath(ref: Pick<ItemRef, 'namespace' | 'name'>): string {
  return ref.namespace ? `namespaces/${ref.namespace}/${ref.name}.json` : `cluster/${ref.name}.json`;
}

/** The entry names of one object, given whether its version is the preferred one. */
export function entryNames(ref: ItemRef, options: { preferred: boolean }): string[] {
  const gr = groupResource(ref);
  const names = [`resources/${gr}/${scopePath(ref)}`];
  if (options.preferred) names.push(`resources/${gr}/${ref.version}-preferredversion/${scopePath(ref)}`);
  return names;
}
