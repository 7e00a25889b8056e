/**
 * Whether every field of `want` has the same value in `have`: how tests compare a restored
 * object with its original once the cluster has filled in defaults the original lacks.
 */
export function subset(want: unknown, have: unknown): boolean {
  if (want && typeof want === 'object' && !Array.isArray(want)) {
    return (
      !!have &&
      typeof have === 'object' &&
      Object.entries(want as Record<string, unknown>).every(([k, v]) =>
        subset(v, (have as Record<string, unknown>)[k]),
      )
    );
  }
  return JSON.stringify(want) === JSON.stringify(have);
}
