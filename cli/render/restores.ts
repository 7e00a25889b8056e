/**
 * How `lifeboat restore describe` prints a restore, in the layout of `velero restore describe`:
 * its phase and progress, its warnings and errors with their text grouped by namespace
 * (results.ts), the backup it came from, its hooks, and with `--details` every item restored with
 * its outcome. Reads only what it is given.
 */
import type { Results } from '../../shared/domain/storage/results.js';
import { renderResults } from './results.js';

/** Lifeboat's record of a restore (`plugins/lifeboat/restores/<name>.json`), as far as it is shown. */
export interface RestoreDocument {
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
  readonly spec: { readonly backupName?: string };
  readonly status: {
    readonly phase?: string;
    readonly startTimestamp?: string;
    readonly completionTimestamp?: string;
    readonly progress?: { readonly totalItems: number; readonly itemsRestored: number };
    readonly warnings?: number;
    readonly errors?: number;
    readonly failureReason?: string;
    readonly validationErrors?: readonly string[];
    readonly hookStatus?: { readonly hooksAttempted?: number; readonly hooksFailed?: number };
  };
}

function resourceListLines(list: Readonly<Record<string, readonly string[]>> | undefined): string[] {
  if (!list) return ['', 'Resource List:  <restore resource list not found>'];
  return [
    '',
    'Resource List:',
    ...Object.keys(list)
      .sort()
      .flatMap((kind) => [`  ${kind}:`, ...(list[kind] ?? []).map((i) => `    - ${i}`)]),
  ];
}

export function renderRestoreDescribe(described: {
  readonly name: string;
  readonly document: RestoreDocument;
  readonly results: Results | undefined;
  readonly resourceList: Readonly<Record<string, readonly string[]>> | undefined;
  readonly details: boolean;
}): string {
  const { name, document } = described;
  const s = document.status;
  const hooks = s.hookStatus;
  const lines = [
    `Name:         ${name}`,
    `Namespace:    ${document.metadata?.namespace ?? 'velero'}`,
    '',
    `Phase:                       ${s.phase ?? 'New'}`,
    `Total items to be restored:  ${s.progress?.totalItems ?? 0}`,
    `Items restored:              ${s.progress?.itemsRestored ?? 0}`,
    '',
    `Started:    ${s.startTimestamp ?? '<n/a>'}`,
    `Completed:  ${s.completionTimestamp ?? '<n/a>'}`,
    ...(s.failureReason ? ['', `Failure reason:  ${s.failureReason}`] : []),
    ...(s.validationErrors?.length
      ? ['', 'Validation errors:', ...s.validationErrors.map((e) => `  ${e}`)]
      : []),
    ...renderResults({ results: described.results, counts: s }),
    '',
    `Backup:  ${document.spec.backupName ?? '<none>'}`,
    ...(hooks
      ? ['', `HooksAttempted:  ${hooks.hooksAttempted ?? 0}`, `HooksFailed:     ${hooks.hooksFailed ?? 0}`]
      : []),
    ...(described.details ? resourceListLines(described.resourceList) : []),
    '',
  ];
  return lines.join('\n');
}
