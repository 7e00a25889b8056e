/**
 * A Schedule's drill target (Lifeboat's, docs/schedules.md): beside the request's `cluster`,
 * never inside the Velero Schedule, so the Schedule stays one Velero accepts unchanged. Each
 * firing of the Schedule also drills the Schedule's latest Completed backup into `drill.cluster`:
 * DR readiness tested at the Schedule's cadence, with no person. Checked by field path.
 */
import * as z from 'zod';
import type { FieldProblem } from '../domain/errors.js';
import { drillSpec } from './drill.js';
import { dnsSubdomain } from './kubernetes.js';

/** `-drill-yyyyMMddHHmmss`: what a scheduled drill's name adds to the Schedule's. */
const DRILL_SUFFIX_LENGTH = '-drill-'.length + 14;

/**
 * A scheduled drill's name is its restore's `lifeboat.io/drill` label value (63 characters at
 * most), so a Schedule with a drill has a name short enough for the suffix.
 */
export const MAX_DRILLED_SCHEDULE_NAME = 63 - DRILL_SUFFIX_LENGTH;

export const scheduleDrill = z.strictObject({
  /** The DR cluster the drills restore into, by its registered name. */
  cluster: dnsSubdomain,
  namespaceMapping: drillSpec.shape.namespaceMapping,
  readyTimeout: drillSpec.shape.readyTimeout,
});
export type ScheduleDrill = z.infer<typeof scheduleDrill>;

/** What the shape cannot say: mapping targets distinct, the Schedule's name short enough. */
export function scheduleDrillProblems(options: {
  readonly drill: ScheduleDrill | undefined;
  readonly scheduleName: string;
}): FieldProblem[] {
  const { drill } = options;
  if (!drill) return [];
  const problems: FieldProblem[] = [];
  if (options.scheduleName.length > MAX_DRILLED_SCHEDULE_NAME)
    problems.push({
      path: 'schedule.metadata.name',
      message: `must be at most ${MAX_DRILLED_SCHEDULE_NAME} characters with a drill (its drills are named <name>-drill-<yyyyMMddHHmmss>)`,
    });
  const targets = Object.values(drill.namespaceMapping ?? {});
  const duplicate = targets.find((t, i) => targets.indexOf(t) !== i);
  if (duplicate)
    problems.push({ path: 'drill.namespaceMapping', message: `two namespaces map to "${duplicate}"` });
  return problems;
}
