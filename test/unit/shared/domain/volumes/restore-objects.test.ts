import { describe, expect, it } from 'vitest';
import {
  awaitingVolume,
  claimFromSnapshot,
  provisionedVolumePatch,
  renamedPersistentVolume,
  volumeIdIn,
  withVolumeId,
} from '../../../../../shared/domain/volumes/restore-objects.js';

type Obj = Record<string, unknown>;

describe('pointing a PV at a new EBS volume (velero-plugin-for-aws SetVolumeID)', () => {
  it.each<[string, Obj, Obj]>([
    [
      'the EBS CSI volume handle',
      { metadata: { name: 'p' }, spec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-old' } } },
      { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-new' } },
    ],
    [
      'an in-tree volume id',
      { metadata: { name: 'p' }, spec: { awsElasticBlockStore: { volumeID: 'vol-old', fsType: 'ext4' } } },
      { awsElasticBlockStore: { volumeID: 'vol-new', fsType: 'ext4' } },
    ],
    [
      'an in-tree volume id with the zone of the failure-domain label',
      {
        metadata: { name: 'p', labels: { 'failure-domain.beta.kubernetes.io/zone': 'eu-west-1b' } },
        spec: { awsElasticBlockStore: { volumeID: 'aws://eu-west-1a/vol-old' } },
      },
      { awsElasticBlockStore: { volumeID: 'aws://eu-west-1b/vol-new' } },
    ],
  ])('sets %s', (_, pv, spec) => {
    const out = withVolumeId(pv, { volumeId: 'vol-new' });
    expect(out.spec).toEqual(spec);
    expect(volumeIdIn(out)).toBe('vol-new');
    // A new object: the input is untouched.
    expect(pv.spec).not.toEqual(spec);
  });

  it('blanks the volume while the PV waits for it, so it can never point at the backed-up volume', () => {
    const pv = {
      metadata: { name: 'p' },
      spec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-old' } },
    };
    const waiting = awaitingVolume(pv, { availabilityZone: 'a', recordedZone: 'a' });
    expect(volumeIdIn(waiting)).toBeUndefined();
  });

  it('renames a PV with the original name in an annotation', () => {
    const out = renamedPersistentVolume(
      { metadata: { name: 'pv-1', annotations: { a: 'b' } } },
      'velero-clone-x',
    );
    expect(out.metadata).toEqual({
      name: 'velero-clone-x',
      annotations: { a: 'b', 'velero.io/original-pv-name': 'pv-1' },
    });
  });
});

describe('a PVC filled from a VolumeSnapshot', () => {
  it.each<[string, string | undefined, number, string]>([
    ['raises a smaller request to the snapshot size', '1Gi', 2 * 2 ** 30, String(2 * 2 ** 30)],
    ['keeps a larger request', '10Gi', 2 * 2 ** 30, '10Gi'],
    ['sets a missing request', undefined, 1024, '1024'],
  ])('%s', (_, storage, size, expected) => {
    const pvc = { metadata: { name: 'c' }, spec: { resources: storage ? { requests: { storage } } : {} } };
    const out = claimFromSnapshot(pvc, { volumeSnapshotName: 'vs', sizeBytes: size });
    expect((out.spec as { resources: { requests: Obj } }).resources.requests.storage).toBe(expected);
  });
});

describe('the patch of a re-provisioned PV (Velero needPatch)', () => {
  const pv = (policy: string, labels?: Record<string, string>): Obj => ({
    metadata: { name: 'p', ...(labels ? { labels } : {}) },
    spec: { persistentVolumeReclaimPolicy: policy },
  });
  it.each<[string, Obj, { reclaimPolicy: string; labels: Record<string, string> | null }, Obj | undefined]>([
    [
      'nothing when policy and labels match',
      pv('Delete', { a: '1', b: '2' }),
      { reclaimPolicy: 'Delete', labels: { a: '1' } },
      undefined,
    ],
    [
      'the policy and labels, others removed, when the policy differs',
      pv('Delete', { a: '1', extra: 'x' }),
      { reclaimPolicy: 'Retain', labels: { a: '1' } },
      { metadata: { labels: { a: '1', extra: null } }, spec: { persistentVolumeReclaimPolicy: 'Retain' } },
    ],
    [
      'missing labels',
      pv('Retain'),
      { reclaimPolicy: 'Retain', labels: { tier: 'gold' } },
      { metadata: { labels: { tier: 'gold' } }, spec: { persistentVolumeReclaimPolicy: 'Retain' } },
    ],
    [
      'nothing for an unknown recorded policy and no labels',
      pv('Delete'),
      { reclaimPolicy: '', labels: null },
      undefined,
    ],
  ])('%s', (_, current, pvInfo, expected) => {
    expect(provisionedVolumePatch(current, pvInfo)).toEqual(expected);
  });
});
