/**
 * How `lifeboat restore describe` prints a restore, in the layout of `velero restore describe`:
 * its phase and progress, its warnings and errors with their text grouped by namespace
 * (results.ts), the backup it came from, its hooks, and with `--details` every item restored with
 * its outcome. Reads only what it is given.
 */
import type { RestoreDocument } from '../../functions/common/stored-records.js';
import type { Results } from '../../shared/domain/storage/results.js';
import { renderResults } from './results.js';
import { table } from './table.js';

export type { RestoreDocument };

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

/** `restore get` as `velero restore get` prints it. */
export function renderRestoreTable(documents: readonly RestoreDocument[]): string {
  const rows = [
    ['NAME', 'BACKUP', 'STATUS', 'STARTED', 'COMPLETED', 'ERRORS', 'WARNINGS', 'CREATED'],
    ...documents.map((d) => [
      d.metadata?.name ?? '',
      d.spec.backupName ?? '',
      d.status.phase ?? 'New',
      d.status.startTimestamp ?? '<nil>',
      d.status.completionTimestamp ?? '<nil>',
      String(d.status.errors ?? 0),
      String(d.status.warnings ?? 0),
      d.metadata?.creationTimestamp ?? '',
    ]),
  ];
  return table(rows);
}
