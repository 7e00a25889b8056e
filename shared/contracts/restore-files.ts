/**
 * A restore's files as read back from a storage location (written by FinalizeRestore, or by
 * anyone with write access): Lifeboat's record of the restore, with the fields `restore
 * describe` shows typed and the rest kept, and the resource list.
 */
import * as z from 'zod';

const count = z.number().int().nonnegative();

export const storedRestoreRecord = z.looseObject({
  apiVersion: z.literal('velero.io/v1', { error: 'must be velero.io/v1' }),
  kind: z.literal('Restore', { error: 'must be Restore' }),
  metadata: z.looseObject({ name: z.string().optional(), namespace: z.string().optional() }).optional(),
  spec: z.looseObject({ backupName: z.string({ error: 'is missing: the backup restored' }) }),
  status: z.looseObject(
    {
      phase: z.string({ error: 'is missing: a restore says its phase' }),
      startTimestamp: z.string().optional(),
      completionTimestamp: z.string().optional(),
      progress: z.looseObject({ totalItems: count, itemsRestored: count }).optional(),
      errors: count.optional(),
      warnings: count.optional(),
      failureReason: z.string().optional(),
      validationErrors: z.array(z.string()).optional(),
      hookStatus: z
        .looseObject({ hooksAttempted: count.optional(), hooksFailed: count.optional() })
        .optional(),
    },
    { error: 'must be an object, with the restore’s phase' },
  ),
});

/** The restore's resource list: `<apiVersion>/<kind>` to `<namespace>/<name>(<result>)` entries. */
export const storedRestoreResourceList = z.record(z.string(), z.array(z.string()));
