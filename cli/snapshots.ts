/**
 * EC2 for the native EBS snapshots of `backup create` and `backup delete`, made only when a
 * region is known (--snapshot-region, else $AWS_REGION), and the AWS SDK loaded only then.
 */
import type { Snapshotter } from '../shared/ports/snapshotter.js';

/** The region of the EBS volumes and snapshots: the flag's, else $AWS_REGION, else none. */
export function snapshotRegion(flag: string | undefined): string | undefined {
  return flag || process.env.AWS_REGION || undefined;
}

export async function snapshotterOf(flag: string | undefined): Promise<{ snapshotter?: Snapshotter }> {
  const region = snapshotRegion(flag);
  if (!region) return {};
  const { ebsSnapshotterFor } = await import('../shared/adapters/aws-adapters.js');
  return { snapshotter: ebsSnapshotterFor({ region }) };
}
