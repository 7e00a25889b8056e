/**
 * The schedule request and the stored Schedule: a `velero.io/v1` Schedule as Velero 1.17 accepts
 * it (`spec.schedule`, `spec.template` validated as a backup request's spec, `paused`,
 * `skipImmediately`, `useOwnerReferencesInBackup` recorded) plus the cluster its backups are
 * of. Lifeboat's retention policy is the annotation `lifeboat.io/retention` (docs/schedules.md),
 * which Velero ignores. Every problem is reported by its field path; parsing never throws
 * anything but ValidationFailed.
 */
import * as z from 'zod';
import { type FieldProblem, ValidationFailed } from '../domain/errors.js';
import { type CronSpec, parseCron } from '../domain/schedules/cron.js';
import type { RetentionPolicy } from '../domain/schedules/retention.js';
import { backupSpec, validateBackupRequest } from './backup-request.js';
import { dnsSubdomain, labels, objectMetaInput, problemsOf, qualifiedName } from './kubernetes.js';
import { scheduleDrill, scheduleDrillProblems } from './schedule-drill.js';

/** The annotation holding a Schedule's retention policy, a JSON object (docs/schedules.md). */
export const RETENTION_ANNOTATION = 'lifeboat.io/retention';

export const SCHEDULE_PHASES = ['New', 'Enabled', 'FailedValidation'] as const;
export type SchedulePhase = (typeof SCHEDULE_PHASES)[number];

export const scheduleStatus = z.object({
  phase: z.enum(SCHEDULE_PHASES).optional(),
  lastBackup: z.string().optional(),
  lastSkipped: z.string().optional(),
  validationErrors: z.array(z.string()).optional(),
  /** Lifeboat: the name of the latest backup started, and why the latest firing was skipped. */
  lastBackupName: z.string().optional(),
  lastSkippedReason: z.string().optional(),
  /** Lifeboat: the latest drill a firing started (a `drill` target), and why the latest was not. */
  lastDrillName: z.string().optional(),
  lastDrillSkippedReason: z.string().optional(),
});

export type ScheduleStatus = z.infer<typeof scheduleStatus>;

/** A schedule's backups carry its name as a label value: 63 characters at most. */
const scheduleName = dnsSubdomain.refine((name) => name.length <= 63, {
  message: 'must be at most 63 characters (it is the velero.io/schedule-name label value of its backups)',
});

export const scheduleObject = z.strictObject({
  apiVersion: z.literal('velero.io/v1').optional(),
  kind: z.literal('Schedule').optional(),
  metadata: objectMetaInput.extend({
    name: scheduleName,
    labels: labels.optional(),
    annotations: z.record(qualifiedName, z.string()).optional(),
    creationTimestamp: z.string().optional(),
  }),
  spec: z.strictObject({
    schedule: z.string({ message: 'is required: a cron expression such as "0 3 * * *"' }),
    template: backupSpec.default({}),
    paused: z.boolean().optional(),
    skipImmediately: z.boolean().nullable().optional(),
    useOwnerReferencesInBackup: z.boolean().nullable().optional(),
  }),
  status: scheduleStatus.optional(),
});

export type Schedule = z.infer<typeof scheduleObject>;

export const scheduleRequest = z.strictObject({
  /** The registered cluster the Schedule's backups are of. */
  cluster: dnsSubdomain,
  schedule: scheduleObject,
  /** Lifeboat: drill the Schedule's latest Completed backup at each firing (schedule-drill.ts). */
  drill: scheduleDrill.optional(),
});

export type ScheduleRequest = z.infer<typeof scheduleRequest>;

/** What `plugins/lifeboat/schedules/<name>.json` holds: the request, with the Schedule's status. */
export const storedSchedule = scheduleRequest;
export type StoredSchedule = ScheduleRequest;

const retentionPolicy = z.strictObject({
  keepLast: z.number().int().min(0).optional(),
  daily: z.number().int().min(0).optional(),
  weekly: z.number().int().min(0).optional(),
  monthly: z.number().int().min(0).optional(),
  yearly: z.number().int().min(0).optional(),
});

/** Parses and checks a schedule request; throws ValidationFailed listing every problem. */
export function parseScheduleRequest(input: unknown): ScheduleRequest {
  const parsed = scheduleRequest.safeParse(input);
  if (!parsed.success) throw new ValidationFailed(problemsOf(parsed.error));
  const request = parsed.data;
  const problems: FieldProblem[] = [...templateProblems(request), ...cronProblems(request.schedule)];
  problems.push(
    ...scheduleDrillProblems({ drill: request.drill, scheduleName: request.schedule.metadata.name }),
  );
  const retention = retentionOf(request.schedule);
  if (!retention.ok) problems.push(...retention.problems);
  if (problems.length > 0) throw new ValidationFailed(problems);
  return request;
}

/** The template, checked exactly as a backup request is (paths renamed to the template's). */
function templateProblems(request: ScheduleRequest): FieldProblem[] {
  const checked = validateBackupRequest({
    cluster: request.cluster,
    backup: { metadata: { name: request.schedule.metadata.name }, spec: request.schedule.spec.template },
  });
  if (checked.ok) return [];
  return checked.problems.map((p) => ({
    path: p.path.replace(/^backup\.spec/, 'schedule.spec.template'),
    message: p.message,
  }));
}

function cronProblems(schedule: Schedule): FieldProblem[] {
  try {
    parseCron(schedule.spec.schedule, 'schedule.spec.schedule');
    return [];
  } catch (error) {
    if (error instanceof ValidationFailed) return [...error.problems];
    throw error;
  }
}

/** The Schedule's parsed cron (valid once parseScheduleRequest accepted it). */
export function cronOf(schedule: Schedule): CronSpec {
  return parseCron(schedule.spec.schedule, 'schedule.spec.schedule');
}

/** The Schedule's retention policy from its annotation, if any, or the problems with it. */
export function retentionOf(
  schedule: Schedule,
): { ok: true; value: RetentionPolicy | undefined } | { ok: false; problems: FieldProblem[] } {
  const text = schedule.metadata.annotations?.[RETENTION_ANNOTATION];
  if (text === undefined) return { ok: true, value: undefined };
  const path = `schedule.metadata.annotations["${RETENTION_ANNOTATION}"]`;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, problems: [{ path, message: 'must be a JSON object such as {"keepLast":7}' }] };
  }
  const parsed = retentionPolicy.safeParse(json);
  if (!parsed.success) return { ok: false, problems: problemsOf(parsed.error, path) };
  return { ok: true, value: parsed.data };
}
