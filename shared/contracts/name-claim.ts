/**
 * A backup's or restore's name claim as stored under `plugins/lifeboat/claims/`: the run that
 * holds the name, when it last showed it was alive (its lease), and, once a later reader found it
 * dead, why. Claims written before leases existed carry only `runId` and `startedAt`: they parse,
 * and count as renewed at their start.
 */
import * as z from 'zod';

export const nameClaim = z.object({
  runId: z.string().min(1),
  startedAt: z.string(),
  /** The last time the run renewed its claim. */
  heartbeatAt: z.string().optional(),
  /** How long after its last renewal a claim still stands for a live run. */
  leaseSeconds: z.number().positive().optional(),
  /** The run itself (a BackupRun or RestoreRun), so a failure can be recorded without it. */
  run: z.record(z.string(), z.unknown()).optional(),
  /** Set when a reader recognised the run as dead: the run may no longer write. */
  abandoned: z.object({ at: z.string(), reason: z.string() }).optional(),
});
export type NameClaim = z.infer<typeof nameClaim>;
