import { describe, expect, it } from 'vitest';
import { parseQuantity } from '../../../../../shared/domain/kubernetes/quantity.js';
import {
  capacityInRange,
  matchVolumePolicy,
  parseCapacityRange,
  type ResourcePolicy,
  type VolumeConditions,
  type VolumeFacts,
  volumeFactsOf,
} from '../../../../../shared/domain/volumes/conditions.js';

type Obj = Record<string, unknown>;

const pv = (spec: Obj, labels?: Record<string, string>): Obj => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'pv-1', ...(labels ? { labels } : {}) },
  spec,
});
const pvc = (options: { labels?: Record<string, string>; phase?: string } = {}): Obj => ({
  metadata: { namespace: 'app', name: 'data', ...(options.labels ? { labels: options.labels } : {}) },
  spec: { volumeName: 'pv-1' },
  ...(options.phase ? { status: { phase: options.phase } } : {}),
});

const ebsCsi = {
  capacity: { storage: '20Gi' },
  storageClassName: 'gp3',
  csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' },
};

/** Whether a single-policy document with these conditions matches the facts. */
const matches = (conditions: VolumeConditions | null, facts: VolumeFacts): boolean =>
  matchVolumePolicy({ version: 'v1', volumePolicies: [{ conditions, action: { type: 'skip' } }] }, facts) !==
  undefined;

describe('capacity ranges', () => {
  it.each([
    ['0,100Gi', '1Gi', true],
    ['0,100Gi', '100Gi', true],
    ['0,100Gi', '101Gi', false],
    [',100Gi', '50Gi', true],
    ['10Gi,', '10Gi', true],
    ['10Gi,', '9Gi', false],
    ['10Gi,0', '1Ti', true],
    ['10Gi,100Gi', '10Gi', true],
    ['10Gi,100Gi', '100Gi', true],
    ['10Gi,100Gi', '5Gi', false],
    ['10Gi,100Gi', '200Gi', false],
    [' 10Gi , 100Gi ', '50Gi', true],
    ['1G,1Gi', '1000000000', true],
    ['', '1Ei', true],
    [',', '0', true],
    // Velero quirk kept: with an open lower bound, a volume of unknown (zero) size is in range.
    ['0,100Gi', '0', true],
    ['10Gi,100Gi', '0', false],
  ])('%j holds %s: %s', (range, size, expected) => {
    const parsed = parseCapacityRange(range);
    const q = parseQuantity(size);
    expect(parsed.ok && q && capacityInRange(parsed.range, q)).toBe(expected);
  });

  it.each([
    ['10Gi', 'must be "lower,upper"'],
    ['1Gi,2Gi,3Gi', 'must be "lower,upper"'],
    ['ten,20Gi', '"ten" is not a Kubernetes quantity'],
    ['100Gi,10Gi', 'the lower bound is above the upper bound'],
  ])('refuses %j', (range, message) => {
    const parsed = parseCapacityRange(range);
    expect(parsed.ok ? 'accepted' : parsed.message).toContain(message);
  });
});

describe('volume facts', () => {
  it('reads capacity, storage class, CSI driver and attributes, type from a PV and labels and phase from its PVC', () => {
    const facts = volumeFactsOf({
      pv: pv({ ...ebsCsi, csi: { ...ebsCsi.csi, volumeAttributes: { protocol: 'nfs' } } }),
      pvc: pvc({ labels: { app: 'db' }, phase: 'Bound' }),
    });
    expect(facts).toEqual({
      capacity: parseQuantity('20Gi'),
      storageClass: 'gp3',
      csi: { driver: 'ebs.csi.aws.com', volumeAttributes: { protocol: 'nfs' } },
      volumeType: 'csi',
      pvcLabels: { app: 'db' },
      pvcPhase: 'Bound',
    });
  });

  it('reads NFS and the volume type from a pod volume, with zero capacity', () => {
    const facts = volumeFactsOf({ podVolume: { name: 'share', nfs: { server: '10.0.0.1', path: '/x' } } });
    expect(facts).toEqual({
      capacity: parseQuantity('0'),
      storageClass: '',
      nfs: { server: '10.0.0.1', path: '/x' },
      volumeType: 'nfs',
      pvcPhase: '',
    });
  });

  it.each([
    [{ awsElasticBlockStore: { volumeID: 'vol-1' } }, 'awsElasticBlockStore'],
    [{ hostPath: { path: '/mnt' } }, 'hostPath'],
    [{ local: { path: '/mnt' } }, 'local'],
    [{ storageos: {} }, 'storageOS'],
    [{}, ''],
  ])('names the PV source type of %j as %j', (spec, type) => {
    expect(volumeFactsOf({ pv: pv(spec) }).volumeType).toBe(type);
  });

  it.each([
    [{ emptyDir: {} }, 'emptyDir'],
    [{ configMap: { name: 'c' } }, 'configMap'],
    [{ secret: { secretName: 's' } }, 'secret'],
    [{ projected: { sources: [] } }, 'projected'],
    [{ downwardAPI: {} }, 'downwardAPI'],
    [{ ephemeral: {} }, 'ephemeral'],
    [{ csi: { driver: 'x' } }, 'csi'],
  ])('names the pod volume source type of %j as %j', (source, type) => {
    expect(volumeFactsOf({ podVolume: { name: 'v', ...source } }).volumeType).toBe(type);
  });

  it('keeps no PVC labels when the PVC has none, so a pvcLabels condition cannot match', () => {
    const facts = volumeFactsOf({ pv: pv(ebsCsi), pvc: pvc() });
    expect(facts.pvcLabels).toBeUndefined();
    expect(matches({ pvcLabels: { app: 'db' } }, facts)).toBe(false);
  });
});

describe('volume policy conditions', () => {
  const csiFacts = volumeFactsOf({
    pv: pv({ ...ebsCsi, csi: { ...ebsCsi.csi, volumeAttributes: { type: 'gp3', encrypted: 'true' } } }),
    pvc: pvc({ labels: { app: 'db', tier: 'data' }, phase: 'Bound' }),
  });
  const nfsFacts = volumeFactsOf({
    pv: pv({
      capacity: { storage: '1Ti' },
      storageClassName: 'efs',
      nfs: { server: '10.0.0.9', path: '/exports/a' },
    }),
  });
  const unboundFacts = volumeFactsOf({ pvc: pvc({ phase: 'Pending' }) });

  it.each<[string, VolumeConditions | null, VolumeFacts, boolean]>([
    ['null conditions match everything', null, csiFacts, true],
    ['empty conditions match everything', {}, nfsFacts, true],
    ['capacity in range', { capacity: '10Gi,100Gi' }, csiFacts, true],
    ['capacity out of range', { capacity: '0,10Gi' }, csiFacts, false],
    ['storage class listed', { storageClass: ['gp2', 'gp3'] }, csiFacts, true],
    ['storage class not listed', { storageClass: ['gp2'] }, csiFacts, false],
    ['empty storage class list', { storageClass: [] }, csiFacts, true],
    ['storage class on a volume without one', { storageClass: ['gp2'] }, unboundFacts, false],
    ['nfs: {} on NFS', { nfs: {} }, nfsFacts, true],
    ['nfs: {} on a non-NFS volume', { nfs: {} }, csiFacts, false],
    ['nfs server equal', { nfs: { server: '10.0.0.9' } }, nfsFacts, true],
    ['nfs server different', { nfs: { server: '10.0.0.8' } }, nfsFacts, false],
    ['nfs path equal', { nfs: { path: '/exports/a' } }, nfsFacts, true],
    ['nfs path different', { nfs: { path: '/exports/b' } }, nfsFacts, false],
    ['nfs server and path equal', { nfs: { server: '10.0.0.9', path: '/exports/a' } }, nfsFacts, true],
    [
      'nfs path equal, server different',
      { nfs: { server: '10.0.0.1', path: '/exports/a' } },
      nfsFacts,
      false,
    ],
    ['csi: {} on CSI', { csi: {} }, csiFacts, true],
    ['csi: {} on a non-CSI volume', { csi: {} }, nfsFacts, false],
    ['csi driver equal', { csi: { driver: 'ebs.csi.aws.com' } }, csiFacts, true],
    ['csi driver different', { csi: { driver: 'efs.csi.aws.com' } }, csiFacts, false],
    [
      'csi attributes a subset',
      { csi: { driver: 'ebs.csi.aws.com', volumeAttributes: { type: 'gp3' } } },
      csiFacts,
      true,
    ],
    [
      'csi attribute value differs',
      { csi: { driver: 'ebs.csi.aws.com', volumeAttributes: { type: 'io2' } } },
      csiFacts,
      false,
    ],
    [
      'csi attribute missing',
      { csi: { driver: 'ebs.csi.aws.com', volumeAttributes: { iops: '3000' } } },
      csiFacts,
      false,
    ],
    ['volume type listed', { volumeTypes: ['nfs', 'csi'] }, csiFacts, true],
    ['volume type not listed', { volumeTypes: ['nfs'] }, csiFacts, false],
    ['pvc labels a subset', { pvcLabels: { app: 'db' } }, csiFacts, true],
    ['pvc labels all equal', { pvcLabels: { app: 'db', tier: 'data' } }, csiFacts, true],
    ['pvc label value differs', { pvcLabels: { app: 'web' } }, csiFacts, false],
    ['pvc label missing', { pvcLabels: { app: 'db', env: 'prod' } }, csiFacts, false],
    ['pvc labels on a PV without PVC', { pvcLabels: { app: 'db' } }, nfsFacts, false],
    ['pvc phase listed', { pvcPhase: ['Pending', 'Lost'] }, unboundFacts, true],
    ['pvc phase not listed', { pvcPhase: ['Pending'] }, csiFacts, false],
    ['pvc phase with no PVC', { pvcPhase: ['Bound'] }, nfsFacts, false],
    ['every condition must match', { storageClass: ['gp3'], capacity: '0,1Gi' }, csiFacts, false],
    [
      'all conditions matching',
      { storageClass: ['gp3'], capacity: '1Gi,', csi: {}, pvcLabels: { app: 'db' } },
      csiFacts,
      true,
    ],
  ])('%s', (_, conditions, facts, expected) => {
    expect(matches(conditions, facts)).toBe(expected);
  });

  it('returns the first matching policy and its index', () => {
    const policy: ResourcePolicy = {
      version: 'v1',
      volumePolicies: [
        { conditions: { storageClass: ['gp2'] }, action: { type: 'skip' } },
        { conditions: { csi: { driver: 'ebs.csi.aws.com' } }, action: { type: 'snapshot' } },
        { conditions: {}, action: { type: 'fs-backup' } },
      ],
    };
    expect(matchVolumePolicy(policy, csiFacts)).toMatchObject({
      index: 1,
      rule: { action: { type: 'snapshot' } },
    });
    expect(matchVolumePolicy(policy, nfsFacts)).toMatchObject({
      index: 2,
      rule: { action: { type: 'fs-backup' } },
    });
    expect(matchVolumePolicy({ version: 'v1' }, nfsFacts)).toBeUndefined();
  });
});
