/**
 * Where a backed-up object is restored: as its archive path says. Velero restores an item into
 * the namespace its path names (`resources/<gr>/namespaces/<ns>/…`, then mapped), whatever the
 * object's own `metadata.namespace` says, and reads cluster-scoped items from `cluster/`. An
 * object that disagrees with its path would otherwise be filtered by one namespace and created in
 * another: it is placed where its path says, and the disagreement is a warning of the item. A
 * Namespace object is named by its path, for the same reason. Pure: returns a new object.
 */

type Json = Record<string, unknown>;

export interface PathPlacement {
  readonly object: Json;
  /** Why the object was moved, once: a warning of the item in the restore's results. */
  readonly warning?: string;
}

const record = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

/** A value as a warning quotes it: a short string, or its kind. */
function shown(value: unknown): string {
  return typeof value === 'string'
    ? JSON.stringify(value.slice(0, 80))
    : value === null
      ? 'null'
      : typeof value;
}

export function placedAtPath(entry: {
  readonly groupResource: string;
  /** The namespace the path names; empty for `cluster/`. */
  readonly namespace: string;
  /** The name the path gives (the file name without `.json`). */
  readonly name: string;
  readonly object: Json;
}): PathPlacement {
  const metadata = record(entry.object.metadata);
  const own = metadata.namespace;
  const warnings: string[] = [];
  const placed: Json = { ...metadata };
  if (entry.namespace) {
    placed.namespace = entry.namespace;
    // Velero writes every namespaced object with its namespace; one without is only completed.
    if (own !== entry.namespace && own !== undefined && own !== '') {
      warnings.push(
        `its metadata.namespace ${shown(own)} is not the namespace of its archive path ("${entry.namespace}"); restored into the path's namespace`,
      );
    }
  } else if (own !== undefined && own !== '') {
    delete placed.namespace;
    warnings.push(
      `its metadata.namespace ${shown(own)} is ignored: its archive path holds cluster-scoped objects`,
    );
  }
  if (entry.groupResource === 'namespaces' && metadata.name !== entry.name) {
    placed.name = entry.name;
    warnings.push(
      `its metadata.name ${shown(metadata.name)} is not the name of its archive path; named "${entry.name}"`,
    );
  }
  const object = { ...entry.object, metadata: placed };
  return warnings.length === 0 ? { object } : { object, warning: warnings.join('; ') };
}
