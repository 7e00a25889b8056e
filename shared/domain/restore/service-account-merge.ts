/**
 * How a restore merges a backed-up ServiceAccount into one that already exists (Velero
 * pkg/restore/merge_service_account.go): the backed-up `secrets` and `imagePullSecrets` whose
 * names the existing account lacks are appended; labels and annotations it lacks are added,
 * and where both have a key, the existing value stays. Velero does this whatever
 * `existingResourcePolicy` says, and does not add its restore labels to the merged account.
 * Pure: returns the JSON merge patch to send, or undefined when the merge changes nothing.
 */
import { createMergePatch, isJsonObject, type JsonObject } from '../kubernetes/merge-patch.js';

/** Velero's labels, set on the restored object, never merged into an existing account. */
const RESTORE_LABELS = ['velero.io/backup-name', 'velero.io/restore-name'];

function byNameAppended(existing: unknown, backedUp: unknown): unknown[] | undefined {
  const first = Array.isArray(existing) ? existing : [];
  const second = Array.isArray(backedUp) ? backedUp : [];
  const names = new Set(first.map((r) => (isJsonObject(r) ? r.name : undefined)));
  const added = second.filter((r) => !names.has(isJsonObject(r) ? r.name : undefined));
  if (added.length === 0) return Array.isArray(existing) ? existing : undefined;
  return [...first, ...added];
}

function missingKeysAdded(options: {
  existing: unknown;
  backedUp: unknown;
  ignore?: readonly string[];
}): Record<string, unknown> | undefined {
  const existing = isJsonObject(options.existing) ? options.existing : undefined;
  const out: Record<string, unknown> = { ...(existing ?? {}) };
  let added = false;
  for (const [key, value] of Object.entries(isJsonObject(options.backedUp) ? options.backedUp : {})) {
    if (options.ignore?.includes(key) || Object.hasOwn(out, key)) continue;
    out[key] = value;
    added = true;
  }
  return added ? out : existing;
}

/** The merge patch that brings the backed-up account's references, labels and annotations into the existing one. */
export function serviceAccountMergePatch(options: {
  existing: JsonObject;
  backedUp: JsonObject;
}): JsonObject | undefined {
  const { existing, backedUp } = options;
  const meta = isJsonObject(existing.metadata) ? existing.metadata : {};
  const backedUpMeta = isJsonObject(backedUp.metadata) ? backedUp.metadata : {};
  const pick = (object: JsonObject, metadata: JsonObject): JsonObject => ({
    ...(object.secrets !== undefined ? { secrets: object.secrets } : {}),
    ...(object.imagePullSecrets !== undefined ? { imagePullSecrets: object.imagePullSecrets } : {}),
    metadata: {
      ...(metadata.labels !== undefined ? { labels: metadata.labels } : {}),
      ...(metadata.annotations !== undefined ? { annotations: metadata.annotations } : {}),
    },
  });
  const secrets = byNameAppended(existing.secrets, backedUp.secrets);
  const imagePullSecrets = byNameAppended(existing.imagePullSecrets, backedUp.imagePullSecrets);
  const labels = missingKeysAdded({
    existing: meta.labels,
    backedUp: backedUpMeta.labels,
    ignore: RESTORE_LABELS,
  });
  const annotations = missingKeysAdded({ existing: meta.annotations, backedUp: backedUpMeta.annotations });
  const desired = pick(
    {
      ...(secrets !== undefined ? { secrets } : {}),
      ...(imagePullSecrets !== undefined ? { imagePullSecrets } : {}),
    },
    { ...(labels !== undefined ? { labels } : {}), ...(annotations !== undefined ? { annotations } : {}) },
  );
  return createMergePatch(pick(existing, meta), desired);
}
