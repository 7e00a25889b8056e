/**
 * A RoleBinding's or ClusterRoleBinding's subjects follow the restore's namespace mapping, as
 * Velero's role-bindings and cluster-role-bindings restore item actions remap them: a
 * ServiceAccount restored into `shop-dr` keeps the permissions it had in `shop`. Subjects of
 * namespaces the mapping does not name are left alone. Pure: changes only the object it is given.
 */

type Json = Record<string, unknown>;

export function remapBindingSubjects(
  binding: Json,
  mapping: Readonly<Record<string, string>> | undefined,
): void {
  if (!mapping || Object.keys(mapping).length === 0 || !Array.isArray(binding.subjects)) return;
  binding.subjects = binding.subjects.map((entry: unknown) => {
    if (!entry || typeof entry !== 'object') return entry;
    const subject = entry as Json;
    const from = subject.namespace;
    if (typeof from !== 'string' || !Object.hasOwn(mapping, from)) return subject;
    return { ...subject, namespace: mapping[from] };
  });
}
