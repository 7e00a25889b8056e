/**
 * What a restore does with an object that already exists (Velero `existingResourcePolicy`):
 * equal once server-set fields are ignored → skipped; different → skipped with Velero's warning
 * (`none`) or a
 * merge-patch update (`update`). A ServiceAccount that differs is merged whatever the policy
 * (Velero restore.go: the backed-up secrets, image pull secrets, labels and annotations it lacks
 * are added; updated, or skipped when it already holds them).
 */
import { isDeepStrictEqual } from 'node:util';
import { serviceAccountMergePatch } from '../../shared/domain/restore/service-account-merge.js';

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
  | {
      readonly action: 'skip';
      readonly reason: string;
      /** The warning the restore reports for the item (Velero: one that exists and differs). */
      readonly warning?: string;
    }
  /** A JSON merge patch of the existing object. */
  | { readonly action: 'update'; readonly patch: Json };

export function existingAction(options: {
  existing: Json;
  desired: Json;
  policy: 'none' | 'update';
  /** The object's resource (`serviceaccounts`, `deployments.apps`); unset: no special merge. */
  groupResource?: string;
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
  if (options.groupResource === 'serviceaccounts') {
    const patch = serviceAccountMergePatch({ existing: options.existing, backedUp: options.desired });
    return patch
      ? { action: 'update', patch }
      : {
          action: 'skip',
          reason:
            'already exists and holds the backed-up secrets, image pull secrets, labels and annotations',
        };
  }
  if (options.policy === 'update') return { action: 'update', patch: options.desired };
  return {
    action: 'skip',
    reason: 'already exists and differs; existingResourcePolicy is none',
    warning: differsWarning(options.desired),
  };
}

/** Velero's words (restore.go, no existingResourcePolicy), so both tools' results read alike. */
export function differsWarning(object: Json): string {
  const name = (object.metadata as { name?: unknown } | undefined)?.name;
  return `could not restore, ${String(object.kind ?? '')}:${String(name ?? '')} already exists. Warning: the in-cluster version is different than the backed-up version`;
}
