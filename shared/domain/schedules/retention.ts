/**
 * Lifeboat's retention policy of a Schedule, beyond Velero's TTL: keep the last N backups, and
 * grandfather-father-son buckets (the newest backup of each of the last D days, W weeks,
 * M months, Y years, in the Schedule's time zone). Pure: decides which backups a policy keeps.
 */
export interface RetentionPolicy {
  readonly keepLast?: number;
  readonly daily?: number;
  readonly weekly?: number;
  readonly monthly?: number;
  readonly yearly?: number;
}
