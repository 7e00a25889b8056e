/**
 * The EBS direct APIs and EC2 of one account and region for block-mode data-mover jobs (optionally
 * through an assumed role, for a restore into another account). Its own module so that file-mode
 * jobs never load the EC2 and EBS clients (a large share of a task's start-up).
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import type { SnapshotBlocks } from '../ports/snapshot-blocks.js';
import type { Snapshotter } from '../ports/snapshotter.js';
import { assumedRoleCredentials, snapshotBlocksFor } from './ebs-snapshot-blocks.js';
import { EbsSnapshotter } from './ebs-snapshotter.js';

/** The EBS direct APIs and EC2 of one account and region, as the task or through a role. */
export function ebsAccess(options: {
  region: string;
  roleArn?: string;
  externalId?: string;
  maxSockets?: number;
}): { blocks: SnapshotBlocks; snapshotter: Snapshotter } {
  const credentials = options.roleArn
    ? assumedRoleCredentials({
        region: options.region,
        roleArn: options.roleArn,
        ...(options.externalId ? { externalId: options.externalId } : {}),
      })
    : undefined;
  return {
    blocks: snapshotBlocksFor({
      region: options.region,
      ...(credentials ? { credentials } : {}),
      ...(options.maxSockets ? { maxSockets: options.maxSockets } : {}),
    }),
    snapshotter: new EbsSnapshotter({
      client: new EC2Client({
        region: options.region,
        maxAttempts: 8,
        ...(credentials ? { credentials } : {}),
      }),
    }),
  };
}
