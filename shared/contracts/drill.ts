/**
 * A DR drill at every boundary: the request (the API's body, the CLI's flags), the run its steps
 * pass along, and the report stored under `plugins/lifeboat/drills/<name>.json`. A drill restores
 * a backup (named, or a schedule's latest Completed one) into a cluster, with namespace mappings,
 * then checks and waits; Lifeboat's own object, shaped as Velero's (metadata + spec).
 */
import * as z from 'zod';
import { parseDuration } from '../domain/kubernetes/duration.js';
import { dnsLabel, dnsSubdomain, objectMetaInput, problemsOf, type ValidationResult } from './kubernetes.js';

/** How long a drill waits for workloads to be ready unless told: long enough for a real cluster's pulls. */
export const DEFAULT_READY_TIMEOUT = '10m';
/** The longest wait a drill may ask for: a Standard workflow's Wait loop, not a process, waits it. */
const MAX_READY_TIMEOUT_MS = 24 * 3600 * 1000;

export const drillSpec = z.strictObject({
  backupName: dnsSubdomain.optional(),
  scheduleName: dnsSubdomain.optional(),
  /** Source namespace → target namespace, as a Restore's. */
  namespaceMapping: z.record(dnsLabel, dnsLabel).optional(),
  /** How long to wait for Deployments, StatefulSets and PVCs once restored (Go duration). */
  readyTimeout: z
    .string()
    .superRefine((d, ctx) => {
      const ms = parseDuration(d);
      if (ms === undefined)
        ctx.addIssue({ code: 'custom', message: 'must be a duration such as 90s, 10m or 1h' });
      else if (ms <= 0 || ms > MAX_READY_TIMEOUT_MS)
        ctx.addIssue({ code: 'custom', message: 'must be more than 0 and at most 24h' });
    })
    .optional(),
});
export type DrillSpec = z.infer<typeof drillSpec>;

export const drillRequest = z.strictObject({
  /** The target cluster, by its registered name. */
  cluster: dnsSubdomain,
  drill: z.strictObject({
    apiVersion: z.literal('lifeboat.io/v1').optional(),
    kind: z.literal('Drill').optional(),
    metadata: objectMetaInput,
    spec: drillSpec,
  }),
  /**
   * The Schedule whose drill target fired this drill (set by the firing, never by a person: the
   * API refuses it); its report names it.
   */
  firedBySchedule: dnsSubdomain.optional(),
});
export type DrillRequest = z.infer<typeof drillRequest>;

/** Every problem of a drill request by field path: its shape, then what its fields mean together. */
export function validateDrillRequest(input: unknown): ValidationResult<DrillRequest> {
  const parsed = drillRequest.safeParse(input);
  if (!parsed.success) return { ok: false, problems: problemsOf(parsed.error) };
  const spec = parsed.data.drill.spec;
  const problems: { path: string; message: string }[] = [];
  if (Boolean(spec.backupName) === Boolean(spec.scheduleName))
    problems.push({
      path: 'drill.spec.backupName',
      message: 'exactly one of backupName and scheduleName must be given',
    });
  const targets = Object.values(spec.namespaceMapping ?? {});
  const duplicate = targets.find((t, i) => targets.indexOf(t) !== i);
  if (duplicate)
    problems.push({ path: 'drill.spec.namespaceMapping', message: `two namespaces map to "${duplicate}"` });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: parsed.data };
}

/** What StartDrill hands on: the drill as started, and the Restore request it runs. */
export const drillRun = z.strictObject({
  name: z.string(),
  runId: z.string(),
  cluster: z.string(),
  backupName: z.string(),
  scheduleName: z.string().optional(),
  /** The Schedule whose drill target fired this drill. */
  firedBySchedule: z.string().optional(),
  backupStartedAt: z.string(),
  namespaceMapping: z.record(z.string(), z.string()),
  startedAt: z.string(),
  /** When the wait for readiness gives up (ISO time). */
  readyDeadline: z.string(),
  restoreName: z.string(),
  /** Seconds between two looks at the workloads (the Wait state's). */
  pollSeconds: z.number().int().positive(),
});
export type DrillRun = z.infer<typeof drillRun>;

/** The restore's end as the drill saw it (the nested execution's output, or its failure). */
export const drillRestoreEnd = z.strictObject({
  phase: z.string(),
  /** Why the restore's execution failed (Step Functions' cause). */
  failure: z.string().optional(),
  /** Why a check could not be made once its retries were spent. */
  checkFailure: z.string().optional(),
  /** Why the restore never started: an earlier drill's namespaces were not cleared. */
  clearFailure: z.string().optional(),
});
export type DrillRestoreEnd = z.infer<typeof drillRestoreEnd>;

const mismatch = z.strictObject({
  item: z.string(),
  problem: z.enum(['missing', 'different', 'not ready', 'unreadable']),
  detail: z.string(),
});

/** A stored drill report (domain/drills/report.ts), read back by `dr get|describe` and the API. */
export const storedDrillReport = z.object({
  name: z.string(),
  phase: z.enum(['InProgress', 'Completed', 'Failed']),
  cluster: z.string(),
  backup: z.object({ name: z.string(), startedAt: z.string(), schedule: z.string().optional() }),
  restore: z.object({ name: z.string(), phase: z.string(), failure: z.string().optional() }),
  namespaceMapping: z.record(z.string(), z.string()),
  startedAt: z.string(),
  completedAt: z.string().optional(),
  readyAt: z.string().optional(),
  rpoSeconds: z.number(),
  rtoSeconds: z.number().optional(),
  items: z.object({ checked: z.number(), notChecked: z.number(), waitedOn: z.number() }),
  mismatches: z.array(mismatch),
  volumes: z.array(z.object({ pvc: z.string(), method: z.string(), source: z.string().optional() })),
  failureReason: z.string().optional(),
  firedBySchedule: z.string().optional(),
});
