/** Rows as aligned columns, as `kubectl get` and `velero get` print them: three spaces apart. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd((widths[i] ?? 0) + 3))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}
