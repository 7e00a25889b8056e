/**
 * What a restore does with an object that already exists (Velero `existingResourcePolicy`):
 * equal once server-set fields are ignored → skipped; different → a warning (`none`) or a
 * merge-patch update (`update`).
 */
import { isDeepStrictEqual } from 'node:util';

type Json = Record<string, unknown>;

const IGNORED_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'selfLink',
  'ownerReferences',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generateName',
];

/** The parts of an object a restore compares: everything but status and server-set metadata. */
export function comparable(object: Json): Json {
  const { status: _status, metadata, ...rest } = object;
  const m = { ...((metadata ?? {}) as Json) };
  for (const key of IGNORED_METADATA) delete m[key];
  const labels = { ...((m.labels ?? {}) as Record<string, string>) };
  delete labels['velero.io/backup-name'];
  delete labels['velero.io/restore-name'];
  m.labels = labels;
  return { ...rest, metadata: m };
}

export type ExistingAction =
  | { readonly action: 'skip'; readonly reason: string }
  | { readonly action: 'update' };

export function existingAction(options: {
  existing: Json;
  desired: Json;
  policy: 'none' | 'update';
}): ExistingAction {
  const desired = comparable(options.desired);
  const existing = comparable(options.existing);
  // The cluster may have filled in defaults the backed-up object lacks: only the backed-up
  // fields are compared.
  const subset = (want: unknown, have: unknown): boolean => {
    if (want && typeof want === 'object' && !Array.isArray(want)) {
      if (!have || typeof have !== 'object' || Array.isArray(have)) return false;
      return Object.entries(want as Json).every(([k, v]) => subset(v, (have as Json)[k]));
    }
    return isDeepStrictEqual(want, have);
  };
  if (subset(desired, existing)) return { action: 'skip', reason: 'already exists and is equal' };
  if (options.policy === 'update') return { action: 'update' };
  return { action: 'skip', reason: 'already exists and differs; existingResourcePolicy is none' };
}
