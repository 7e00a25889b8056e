import { describe, expect, it } from 'vitest';
import {
  availabilityZoneOf,
  ebsVolumeIdOf,
  MAX_TAGS,
  restoredVolumeTags,
  snapshotTags,
} from '../../../../../shared/domain/volumes/ebs-volume.js';

type Obj = Record<string, unknown>;
const pv = (spec: Obj, labels?: Record<string, string>): Obj => ({
  metadata: { name: 'pv-1', ...(labels ? { labels } : {}) },
  spec,
});
const affinity = (...expressions: Obj[]): Obj => ({
  nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: expressions }] } },
});

describe('EBS volume id of a PV', () => {
  it.each<[string, Obj, string | undefined]>([
    [
      'the ebs.csi.aws.com volume handle',
      { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0123' } },
      'vol-0123',
    ],
    ['an in-tree volume id', { awsElasticBlockStore: { volumeID: 'vol-0456' } }, 'vol-0456'],
    [
      'an in-tree aws://zone/ volume id',
      { awsElasticBlockStore: { volumeID: 'aws://eu-west-1b/vol-0789' } },
      'vol-0789',
    ],
    [
      'nothing for another CSI driver',
      { csi: { driver: 'efs.csi.aws.com', volumeHandle: 'fs-1::fsap-2' } },
      undefined,
    ],
    ['nothing for an NFS PV', { nfs: { server: 'x', path: '/' } }, undefined],
    ['nothing for an empty in-tree volume id', { awsElasticBlockStore: { volumeID: '' } }, undefined],
    [
      'nothing for an EBS CSI handle that is not a volume id',
      { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'snap-1' } },
      undefined,
    ],
  ])('is %s', (_, spec, expected) => {
    expect(ebsVolumeIdOf(pv(spec))).toBe(expected);
  });
});

describe('availability zone of a PV', () => {
  it('comes first from topology.kubernetes.io/zone', () => {
    const labels = {
      'topology.kubernetes.io/zone': 'us-east-1a',
      'failure-domain.beta.kubernetes.io/zone': 'us-east-1b',
    };
    expect(
      availabilityZoneOf(
        pv(
          affinity({ key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['us-east-1c'] }),
          labels,
        ),
      ),
    ).toBe('us-east-1a');
  });

  it('then from the deprecated failure-domain label', () => {
    expect(availabilityZoneOf(pv({}, { 'failure-domain.beta.kubernetes.io/zone': 'us-east-1b' }))).toBe(
      'us-east-1b',
    );
  });

  it('then from a node affinity In requirement on a zone key, first value', () => {
    const spec = affinity(
      { key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] },
      { key: 'topology.ebs.csi.aws.com/zone', operator: 'NotIn', values: ['us-east-1d'] },
      { key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['us-east-1c', 'us-east-1d'] },
    );
    expect(availabilityZoneOf(pv(spec))).toBe('us-east-1c');
  });

  it('keeps a present but empty zone label, as Velero does', () => {
    expect(
      availabilityZoneOf(
        pv({}, { 'topology.kubernetes.io/zone': '', 'failure-domain.beta.kubernetes.io/zone': 'b' }),
      ),
    ).toBe('');
  });

  it('finally from an in-tree aws://zone/ volume id', () => {
    expect(availabilityZoneOf(pv({ awsElasticBlockStore: { volumeID: 'aws://eu-west-1b/vol-1' } }))).toBe(
      'eu-west-1b',
    );
  });

  it('is unknown when nothing names a zone', () => {
    expect(
      availabilityZoneOf(pv({ csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' } })),
    ).toBeUndefined();
  });
});

describe('snapshot tags', () => {
  it('are the backup labels, velero.io/backup and velero.io/pv, then the volume tags Velero did not set', () => {
    const { tags, dropped } = snapshotTags({
      backupName: 'nightly',
      backupLabels: { team: 'data' },
      pvName: 'pv-1',
      volumeTags: [
        { key: 'velero.io/backup', value: 'an-older-backup' },
        { key: 'team', value: 'storage' },
        { key: 'Name', value: 'db-volume' },
        { key: 'aws:cloudformation:stack-name', value: 'stack' },
      ],
    });
    expect(tags).toEqual([
      { key: 'team', value: 'data' },
      { key: 'velero.io/backup', value: 'nightly' },
      { key: 'velero.io/pv', value: 'pv-1' },
      { key: 'Name', value: 'db-volume' },
    ]);
    expect(dropped).toEqual(['aws:cloudformation:stack-name']);
  });

  it('stop at EC2 limit of 50, dropping volume tags beyond it', () => {
    const volumeTags = Array.from({ length: 60 }, (_, i) => ({ key: `k${i}`, value: 'v' }));
    const { tags, dropped } = snapshotTags({ backupName: 'b', pvName: 'p', volumeTags });
    expect(tags).toHaveLength(MAX_TAGS);
    expect(tags.slice(0, 2).map((t) => t.key)).toEqual(['velero.io/backup', 'velero.io/pv']);
    expect(dropped).toEqual(volumeTags.slice(48).map((t) => t.key));
  });
});

describe('tags of a volume re-created from a snapshot', () => {
  const snapshotTagList = [
    { key: 'velero.io/backup', value: 'nightly' },
    { key: 'kubernetes.io/cluster/source', value: 'owned' },
    { key: 'KubernetesCluster', value: 'source' },
    { key: 'aws:backup:source-resource', value: 'x' },
    { key: 'Name', value: 'db' },
  ];

  it("are the snapshot's tags without reserved aws: keys", () => {
    expect(restoredVolumeTags({ snapshotTags: snapshotTagList })).toEqual([
      { key: 'velero.io/backup', value: 'nightly' },
      { key: 'kubernetes.io/cluster/source', value: 'owned' },
      { key: 'KubernetesCluster', value: 'source' },
      { key: 'Name', value: 'db' },
    ]);
  });

  it('rewrite cluster ownership for the target cluster, and let extra tags win', () => {
    expect(
      restoredVolumeTags({
        snapshotTags: snapshotTagList,
        clusterName: 'dr',
        extra: [{ key: 'Name', value: 'restored' }],
      }),
    ).toEqual([
      { key: 'kubernetes.io/cluster/dr', value: 'owned' },
      { key: 'KubernetesCluster', value: 'dr' },
      { key: 'Name', value: 'restored' },
      { key: 'velero.io/backup', value: 'nightly' },
    ]);
  });

  it("keep the extra tags a retry finds the volume by, cutting the snapshot's at EC2's limit", () => {
    const many = Array.from({ length: 60 }, (_, i) => ({ key: `team-${i}`, value: 'x' }));
    const extra = [
      { key: 'velero.io/restore', value: 'r1' },
      { key: 'velero.io/pv', value: 'pv-1' },
    ];
    const tags = restoredVolumeTags({ snapshotTags: many, clusterName: 'dr', extra });
    expect(tags).toHaveLength(50);
    expect(tags).toEqual(expect.arrayContaining(extra));
    expect(tags).toContainEqual({ key: 'kubernetes.io/cluster/dr', value: 'owned' });
  });
});
