/**
 * The CDK app's volume context keys: `lifeboat:snapshotKeys` (the customer KMS key ARNs the
 * backed-up EBS volumes are encrypted with, comma-separated: copySnapshots grants the DR accounts
 * use of these only) and `lifeboat:volumeRegions` (regions of the account, besides the stack's,
 * restores may create volumes in, comma-separated). A malformed value fails the synth naming its key.
 */
import type { Node } from 'constructs';
import type { LifeboatStackProps } from '../lifeboat-stack.js';

const listOf = (node: Node, key: string): string[] =>
  String(node.tryGetContext(key) ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

const KEY_ARN = /^arn:aws[\w-]*:kms:[a-z0-9-]+:\d{12}:key\/[\w-]+$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;

/** The stack props the volume context keys give (none when no key is set). */
export function volumeContext(node: Node): Pick<LifeboatStackProps, 'snapshotKeys' | 'volumeRegions'> {
  const keys = listOf(node, 'lifeboat:snapshotKeys');
  for (const key of keys)
    if (!KEY_ARN.test(key))
      throw new Error(`-c lifeboat:snapshotKeys must be KMS key ARNs (not aliases), not "${key}"`);
  const regions = listOf(node, 'lifeboat:volumeRegions');
  for (const region of regions)
    if (!REGION.test(region))
      throw new Error(`-c lifeboat:volumeRegions must be AWS region names, not "${region}"`);
  return {
    ...(keys.length ? { snapshotKeys: keys } : {}),
    ...(regions.length ? { volumeRegions: regions } : {}),
  };
}
