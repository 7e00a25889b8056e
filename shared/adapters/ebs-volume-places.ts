/**
 * EC2 where a restore's volumes land when that is not the caller's own account and region: a
 * client for the place's region, through the place's role when it names one (STS AssumeRole
 * with its external id, the credentials path the data mover's cross-account restores take).
 * One client per place, made on first use and kept. Never assumes a role the place does not name.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { Snapshotter, SnapshotterAt, VolumePlace } from '../ports/snapshotter.js';
import { assumedRoleCredentials } from './ebs-snapshot-blocks.js';
import { EbsSnapshotter } from './ebs-snapshotter.js';

export function ebsSnapshotterAt(
  options: {
    /** The region of a place that names none (default: the SDK's, from the environment). */
    defaultRegion?: string;
    endpoint?: string;
    /** The credentials roles are assumed from, and used as they are without a role (default: the chain). */
    credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  } = {},
): SnapshotterAt {
  const made = new Map<string, Snapshotter>();
  return (place: VolumePlace): Snapshotter => {
    const region = place.region ?? options.defaultRegion;
    const key = `${region ?? ''}|${place.roleArn ?? ''}|${place.externalId ?? ''}`;
    let snapshotter = made.get(key);
    if (!snapshotter) {
      const endpoint = options.endpoint ? { endpoint: options.endpoint } : {};
      const credentials = place.roleArn
        ? assumedRoleCredentials({
            region: region ?? 'us-east-1',
            roleArn: place.roleArn,
            ...(place.externalId ? { externalId: place.externalId } : {}),
            ...endpoint,
            ...(options.credentials ? { credentials: options.credentials } : {}),
          })
        : options.credentials;
      snapshotter = new EbsSnapshotter({
        client: new EC2Client({
          ...(region ? { region } : {}),
          maxAttempts: 8,
          ...endpoint,
          ...(credentials ? { credentials } : {}),
        }),
      });
      made.set(key, snapshotter);
    }
    return snapshotter;
  };
}
