/**
 * A native volume restored elsewhere (another account or region: the request's, or a DR
 * deployment's own) comes back from its snapshot copy there, in a zone of that region.
 */
import { describe, expect, it } from 'vitest';
import { volumeHomeOf } from '../../../../../functions/plan-restore/plan-volumes.js';
import type { BackupVolumeInfo } from '../../../../../shared/domain/volumes/info-shapes.js';
import { persistentVolumeAction } from '../../../../../shared/domain/volumes/pv-action.js';

const DR_ACCOUNT = '210987654321';

const native: BackupVolumeInfo = {
  pvcName: 'data',
  pvcNamespace: 'shop',
  pvName: 'pv-1',
  backupMethod: 'NativeSnapshot',
  snapshotDataMoved: false,
  preserveLocalSnapshot: false,
  skipped: false,
  nativeSnapshotInfo: {
    snapshotHandle: 'snap-1',
    volumeType: 'gp3',
    volumeAZ: 'us-east-1a',
    iops: '',
    Phase: 'Completed',
  },
  snapshotCopies: [
    {
      account: DR_ACCOUNT,
      region: 'us-west-2',
      snapshotHandle: 'snap-copy',
      sourceSnapshotHandle: 'snap-1',
      Phase: 'Completed',
    },
  ],
};

const actionOf = (options: { availabilityZone?: string; home: { account?: string; region?: string } }) =>
  persistentVolumeAction({
    pv: { name: 'pv-1', claimNamespace: 'shop', reclaimPolicy: 'Delete', ebs: true },
    info: native,
    exists: false,
    elsewhere: true,
    home: options.home,
    ...(options.availabilityZone ? { availabilityZone: options.availabilityZone } : {}),
    cloneName: () => 'x',
  });

describe('a native volume restored elsewhere', () => {
  it('is made from the copy in the zone the restore names in that region', () => {
    expect(
      actionOf({ availabilityZone: 'us-west-2b', home: { account: DR_ACCOUNT, region: 'us-west-2' } }),
    ).toEqual({
      action: 'from-snapshot',
      source: {
        snapshotHandle: 'snap-copy',
        volumeType: 'gp3',
        availabilityZone: 'us-west-2b',
        recordedAvailabilityZone: 'us-east-1a',
      },
    });
  });

  it('goes to the zone of the same letter in that region when the restore names none', () => {
    expect(actionOf({ home: { account: DR_ACCOUNT, region: 'us-west-2' } })).toMatchObject({
      action: 'from-snapshot',
      source: { availabilityZone: 'us-west-2a', recordedAvailabilityZone: 'us-east-1a' },
    });
  });

  it('fails, naming volumeAvailabilityZone, when the zone the restore names is not of that region', () => {
    expect(
      actionOf({ availabilityZone: 'us-east-1b', home: { account: DR_ACCOUNT, region: 'us-west-2' } }),
    ).toEqual({
      action: 'fail',
      reason:
        'its volume is restored in region us-west-2, and its availability zone us-east-1b is not one of that region: name one (volumeAvailabilityZone)',
    });
  });

  it('takes a Local Zone of the region, and not a zone of a region that merely starts alike', () => {
    const home = { account: DR_ACCOUNT, region: 'us-west-2' };
    expect(actionOf({ availabilityZone: 'us-west-2-lax-1a', home }).action).toBe('from-snapshot');
    expect(actionOf({ availabilityZone: 'us-west-22a', home }).action).toBe('fail');
  });
});

describe('volumeHomeOf', () => {
  it.each([
    ['a request naming nothing, outside a DR deployment', {}, undefined, {}],
    [
      'a request naming a region and a role',
      { volumeRegion: 'us-west-2', volumeAccountRoleArn: `arn:aws:iam::${DR_ACCOUNT}:role/restore` },
      undefined,
      { elsewhere: true, home: { account: DR_ACCOUNT, region: 'us-west-2' } },
    ],
    [
      'a DR deployment, the request naming nothing: its own account and region',
      {},
      { account: DR_ACCOUNT, region: 'us-west-2' },
      { elsewhere: true, home: { account: DR_ACCOUNT, region: 'us-west-2' } },
    ],
    [
      'a DR deployment, the request naming another region',
      { volumeRegion: 'eu-west-1' },
      { account: DR_ACCOUNT, region: 'us-west-2' },
      { elsewhere: true, home: { account: DR_ACCOUNT, region: 'eu-west-1' } },
    ],
  ])('places %s', (_, spec, deployment, expected) => {
    expect(volumeHomeOf(spec, deployment)).toEqual(expected);
  });
});
