/**
 * Velero's include/exclude list semantics (pkg/util/collections/includes_excludes.go):
 * an exclude match always wins; an empty include list or `*` includes everything; otherwise
 * a value is included when an include pattern matches it.
 */
import { globMatches } from './glob.js';

export interface IncludesExcludes {
  readonly includes: readonly string[];
  readonly excludes: readonly string[];
}

export function includesEverything(ie: IncludesExcludes): boolean {
  return ie.includes.length === 0 || ie.includes.includes('*');
}

/** True when nothing is excluded and everything is included (Velero: "all namespaces"). */
export function selectsAll(ie: IncludesExcludes): boolean {
  return includesEverything(ie) && ie.excludes.length === 0;
}

export function shouldInclude(ie: IncludesExcludes, value: string): boolean {
  if (ie.excludes.some((p) => p === '*' || globMatches(p, value))) return false;
  if (includesEverything(ie)) return true;
  return ie.includes.some((p) => globMatches(p, value));
}
