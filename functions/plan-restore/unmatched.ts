/**
 * What a restore request names that the backup does not hold: a namespace mapping whose source
 * namespace has nothing restored, an `includeItems` entry that no backed-up item is. Either
 * would be a silent no-op; each becomes a warning of the restore (in the log, the results and
 * the counts), in the namespace it names. Decides from what the pass over the archive found.
 */
import type { ArchiveItem } from '../../shared/adapters/backup-archive-reader.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { Planning } from './planning.js';

/** At most this many warnings of each kind: a request listing thousands of absent items says so once. */
const MAX_EACH = 20;

const itemId = (groupResource: string, namespace: string, name: string): string =>
  `${groupResource}/${namespace}/${name}`;

/** Notes what the backup holds for the checks below: each entry's namespace and identity. */
export function noteBackedUp(planning: Planning, entry: ArchiveItem): void {
  const { found } = planning;
  if (entry.namespace) found.backupNamespaces.add(entry.namespace);
  if (entry.groupResource === 'namespaces') found.backupNamespaces.add(entry.name);
  if (planning.selection.wantedItems)
    found.backedUpItems.add(itemId(entry.groupResource, entry.namespace, entry.name));
}

function warning(options: { time: string; message: string; namespace: string }): LogEvent {
  return {
    time: options.time,
    level: 'warning',
    msg: options.message,
    fields: options.namespace ? { namespace: options.namespace } : {},
  };
}

function limited(warnings: LogEvent[], what: string): LogEvent[] {
  if (warnings.length <= MAX_EACH) return warnings;
  const first = warnings[0] as LogEvent;
  return [
    ...warnings.slice(0, MAX_EACH),
    { ...first, msg: `and ${warnings.length - MAX_EACH} more ${what}`, fields: {} },
  ];
}

/** The request's namespace mappings and `includeItems` entries that restore nothing. */
export function unmatchedWarnings(planning: Planning, time: string): LogEvent[] {
  const { spec, run, found, selection } = planning;
  const mappings = Object.entries(spec.namespaceMapping ?? {})
    .filter(([source]) => !found.namespacesNeeded.has(source))
    .map(([source, target]) =>
      warning({
        time,
        namespace: source,
        message: found.backupNamespaces.has(source)
          ? `namespace mapping "${source}:${target}" restores nothing: the restore's filters leave out everything in namespace "${source}"`
          : `namespace mapping "${source}:${target}" restores nothing: backup "${run.backupName}" has no namespace "${source}"`,
      }),
    );
  const items = (selection.wantedItems ?? []).flatMap((wanted, i) =>
    found.backedUpItems.has(itemId(wanted.groupResource, wanted.namespace, wanted.name))
      ? []
      : [
          warning({
            time,
            namespace: wanted.namespace,
            message: `includeItems "${spec.includeItems?.[i] ?? wanted.name}" restores nothing: backup "${run.backupName}" has no such item`,
          }),
        ],
  );
  return [...limited(mappings, 'namespace mappings'), ...limited(items, 'includeItems entries')];
}
