/**
 * `dr drill`'s flags as a drill request, checked as StartDrill checks it: each problem a usage
 * error naming its flag. The drill's name defaults to `<backup or schedule>-drill-YYYYMMDDhhmmss`.
 */
import { validateDrillRequest } from '../../shared/contracts/drill.js';
import { type FlagValues, UsageError } from '../flags.js';
import { refuseProblems } from '../request-check.js';
import { namespaceMapping } from '../restore/request.js';
import type { drDrillFlags } from './flags.js';

type DrillFlags = FlagValues<typeof drDrillFlags>;

export function defaultDrillName(values: DrillFlags, now: Date): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${values['from-backup'] ?? values['from-schedule'] ?? 'dr'}-drill-${stamp}`;
}

/** The request, refused with the flag of each problem. */
export function drillRequest(options: { readonly name: string; readonly values: DrillFlags }): unknown {
  const { values } = options;
  if (values['from-backup'] !== undefined && values['from-schedule'] !== undefined)
    throw new UsageError('--from-backup and --from-schedule exclude each other: give one');
  if (!values['from-backup'] && !values['from-schedule'])
    throw new UsageError('dr drill needs --from-backup BACKUP or --from-schedule SCHEDULE');
  const spec = Object.fromEntries(
    Object.entries({
      backupName: values['from-backup'],
      scheduleName: values['from-schedule'],
      namespaceMapping: namespaceMapping(values['namespace-mappings']),
      readyTimeout: values.timeout,
    }).filter(([, v]) => v !== undefined),
  );
  const request = {
    cluster: values.cluster ?? 'local',
    drill: { apiVersion: 'lifeboat.io/v1', kind: 'Drill', metadata: { name: options.name }, spec },
  };
  const checked = validateDrillRequest(request);
  if (!checked.ok)
    refuseProblems(
      checked.problems.map((p) =>
        p.path === 'drill.spec.readyTimeout'
          ? { path: '--timeout', message: p.message }
          : { ...p, path: p.path.replace(/^drill\./, 'restore.') },
      ),
    );
  return request;
}
