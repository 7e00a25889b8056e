import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideVolumeAction,
  type LegacyVolumeSettings,
  type ResourcePolicy,
  type VolumeActionType,
  type VolumeSubject,
} from '../../../../../shared/domain/volumes/policy.js';

type Obj = Record<string, unknown>;

const pvcObj = (name = 'data', extra: Obj = {}): Obj => ({
  metadata: { namespace: 'app', name, labels: { app: 'db' } },
  spec: { volumeName: `pv-${name}` },
  status: { phase: 'Bound' },
  ...extra,
});
const ebsCsiPv = (name = 'data'): Obj => ({
  metadata: { name: `pv-${name}` },
  spec: {
    capacity: { storage: '20Gi' },
    storageClassName: 'gp3',
    csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0abc' },
    claimRef: { namespace: 'app', name },
  },
});
const inTreePv = (name = 'data'): Obj => ({
  metadata: { name: `pv-${name}` },
  spec: {
    capacity: { storage: '20Gi' },
    storageClassName: 'gp2',
    awsElasticBlockStore: { volumeID: 'aws://us-east-1a/vol-0def' },
    claimRef: { namespace: 'app', name },
  },
});
const nfsPv = (): Obj => ({
  metadata: { name: 'pv-data' },
  spec: {
    capacity: { storage: '1Ti' },
    nfs: { server: '10.0.0.9', path: '/x' },
    claimRef: { namespace: 'app', name: 'data' },
  },
});
const hostPathPv = (): Obj => ({
  metadata: { name: 'pv-data' },
  spec: {
    capacity: { storage: '1Gi' },
    hostPath: { path: '/mnt' },
    claimRef: { namespace: 'app', name: 'data' },
  },
});
const pod = (
  options: { name?: string; namespace?: string; annotations?: Record<string, string>; volumes?: Obj[] } = {},
): Obj => ({
  metadata: {
    namespace: options.namespace ?? 'app',
    name: options.name ?? 'db-0',
    ...(options.annotations ? { annotations: options.annotations } : {}),
  },
  spec: { volumes: options.volumes ?? [{ name: 'storage', persistentVolumeClaim: { claimName: 'data' } }] },
});
const OPT_IN = 'backup.velero.io/backup-volumes';
const OPT_OUT = 'backup.velero.io/backup-volumes-excludes';

const claim = (options: { pv?: Obj; pvc?: Obj; pods?: Obj[] } = {}): VolumeSubject => ({
  kind: 'claim',
  pvc: options.pvc ?? pvcObj(),
  ...(options.pv === undefined ? { pv: ebsCsiPv() } : { pv: options.pv }),
  pods: options.pods ?? [pod()],
});
const catchAll = (type: VolumeActionType): ResourcePolicy => ({
  version: 'v1',
  volumePolicies: [{ conditions: {}, action: { type } }],
});

describe('volume policy actions', () => {
  it('skips a volume a policy skips, whatever the pod annotations and snapshotVolumes say', () => {
    const decision = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_IN]: 'storage' } })] }),
      policy: catchAll('skip'),
      settings: { snapshotVolumes: true, defaultVolumesToFsBackup: true },
    });
    expect(decision).toEqual({
      action: 'skip',
      approach: 'any',
      reason: "matched action is 'skip' in chosen resource policies (volumePolicies[0])",
      policyIndex: 0,
    });
  });

  it('snapshots a volume a policy snapshots even when snapshotVolumes is false', () => {
    const decision = decideVolumeAction({
      subject: claim(),
      policy: catchAll('snapshot'),
      settings: { snapshotVolumes: false },
    });
    expect(decision).toMatchObject({
      action: 'snapshot',
      method: 'csi',
      policyIndex: 0,
      reason: 'volumePolicies[0] asks for a snapshot',
    });
  });

  it('snapshots a volume a policy snapshots even when its pod opts it into fs-backup', () => {
    const decision = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_IN]: 'storage' } })] }),
      policy: catchAll('snapshot'),
      settings: { defaultVolumesToFsBackup: true },
    });
    expect(decision.action).toBe('snapshot');
  });

  it('backs up by fs-backup a volume a policy selects, with neither opt-in nor defaultVolumesToFsBackup', () => {
    const decision = decideVolumeAction({
      subject: claim(),
      policy: catchAll('fs-backup'),
      settings: { defaultVolumesToFsBackup: false },
    });
    expect(decision).toEqual({
      action: 'fs-backup',
      pod: { namespace: 'app', name: 'db-0', volumeName: 'storage' },
      reason: 'volumePolicies[0] asks for fs-backup',
      policyIndex: 0,
    });
  });

  it('backs up by fs-backup a volume a policy selects even when its pod opts it out', () => {
    const decision = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_OUT]: 'storage' } })] }),
      policy: catchAll('fs-backup'),
      settings: { defaultVolumesToFsBackup: true },
    });
    expect(decision.action).toBe('fs-backup');
  });

  it('skips a volume a policy selects for fs-backup when no pod in the backup mounts it', () => {
    const decision = decideVolumeAction({ subject: claim({ pods: [] }), policy: catchAll('fs-backup') });
    expect(decision).toMatchObject({
      action: 'skip',
      approach: 'podvolume',
      reason: 'volumePolicies[0] asks for fs-backup, but no pod in the backup mounts the volume',
    });
  });

  it('lets the first matching policy decide', () => {
    const policy: ResourcePolicy = {
      version: 'v1',
      volumePolicies: [
        { conditions: { storageClass: ['gp2'] }, action: { type: 'skip' } },
        { conditions: { capacity: '10Gi,100Gi' }, action: { type: 'fs-backup' } },
        { conditions: { csi: {} }, action: { type: 'skip' } },
      ],
    };
    expect(decideVolumeAction({ subject: claim(), policy })).toMatchObject({
      action: 'fs-backup',
      policyIndex: 1,
    });
    expect(decideVolumeAction({ subject: claim({ pv: inTreePv() }), policy })).toMatchObject({
      action: 'skip',
      policyIndex: 0,
    });
  });

  it('falls back to the legacy rules when a policy exists but none matches', () => {
    const policy: ResourcePolicy = {
      version: 'v1',
      volumePolicies: [{ conditions: { nfs: {} }, action: { type: 'skip' } }],
    };
    expect(decideVolumeAction({ subject: claim(), policy })).toMatchObject({
      action: 'snapshot',
      reason: 'snapshotVolumes is not set to false',
    });
  });

  it('skips an unbound PVC a pvcPhase policy skips', () => {
    const policy: ResourcePolicy = {
      version: 'v1',
      volumePolicies: [{ conditions: { pvcPhase: ['Pending'] }, action: { type: 'skip' } }],
    };
    const pending = pvcObj('data', { spec: {}, status: { phase: 'Pending' } });
    expect(decideVolumeAction({ subject: { kind: 'claim', pvc: pending }, policy })).toMatchObject({
      action: 'skip',
      policyIndex: 0,
    });
  });
});

describe('legacy volume rules (no policy matches)', () => {
  it('backs up by fs-backup a volume its pod opts in with backup.velero.io/backup-volumes', () => {
    const decision = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_IN]: 'cache,storage' } })] }),
    });
    expect(decision).toEqual({
      action: 'fs-backup',
      pod: { namespace: 'app', name: 'db-0', volumeName: 'storage' },
      reason: 'pod app/db-0 volume "storage" is opted in by backup.velero.io/backup-volumes',
    });
  });

  it('reads the annotation list as Velero does, without trimming spaces', () => {
    const decision = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_IN]: 'cache, storage' } })] }),
    });
    expect(decision.action).toBe('snapshot');
  });

  it('backs up every volume by fs-backup under defaultVolumesToFsBackup unless the pod excludes it', () => {
    const included = decideVolumeAction({ subject: claim(), settings: { defaultVolumesToFsBackup: true } });
    expect(included).toMatchObject({
      action: 'fs-backup',
      reason: expect.stringContaining('defaultVolumesToFsBackup is set'),
    });
    const excluded = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_OUT]: 'storage' } })] }),
      settings: { defaultVolumesToFsBackup: true },
    });
    expect(excluded.action).toBe('snapshot');
  });

  it('ignores the opt-in annotation under defaultVolumesToFsBackup and the opt-out one without it', () => {
    const optInIgnored = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_IN]: 'other', [OPT_OUT]: 'storage' } })] }),
      settings: { defaultVolumesToFsBackup: true },
    });
    expect(optInIgnored.action).toBe('snapshot');
    const optOutIgnored = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_OUT]: 'other' } })] }),
    });
    expect(optOutIgnored.action).toBe('snapshot');
  });

  it('does not snapshot a volume backed up by fs-backup, even with snapshotVolumes true', () => {
    const decision = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_IN]: 'storage' } })] }),
      settings: { snapshotVolumes: true },
    });
    expect(decision.action).toBe('fs-backup');
  });

  it('takes fs-backup from any pod that mounts the PVC, in pod order', () => {
    const decision = decideVolumeAction({
      subject: claim({
        pods: [pod({ name: 'a' }), pod({ name: 'b', annotations: { [OPT_IN]: 'storage' } })],
      }),
    });
    expect(decision).toMatchObject({ action: 'fs-backup', pod: { name: 'b' } });
  });

  it('ignores pods of another namespace that claim a PVC of the same name', () => {
    const decision = decideVolumeAction({
      subject: claim({ pods: [pod({ namespace: 'other', annotations: { [OPT_IN]: 'storage' } })] }),
    });
    expect(decision.action).toBe('snapshot');
  });

  it.each<[LegacyVolumeSettings['snapshotVolumes'], string]>([
    [undefined, 'snapshotVolumes is not set to false'],
    [null, 'snapshotVolumes is not set to false'],
    [true, 'snapshotVolumes is true'],
  ])('snapshots when snapshotVolumes is %j', (snapshotVolumes, reason) => {
    expect(decideVolumeAction({ subject: claim(), settings: { snapshotVolumes } })).toMatchObject({
      action: 'snapshot',
      reason,
    });
  });

  it('skips when snapshotVolumes is false and nothing selects fs-backup', () => {
    expect(decideVolumeAction({ subject: claim(), settings: { snapshotVolumes: false } })).toEqual({
      action: 'skip',
      approach: 'volumeSnapshot',
      reason: 'snapshotVolumes is false and neither a volume policy nor a pod annotation selects fs-backup',
    });
  });

  it('skips (and does not snapshot) a hostPath PV its pod opts into fs-backup', () => {
    const decision = decideVolumeAction({
      subject: claim({ pv: hostPathPv(), pods: [pod({ annotations: { [OPT_IN]: 'storage' } })] }),
    });
    expect(decision).toMatchObject({
      action: 'skip',
      approach: 'podvolume',
      reason: expect.stringContaining('the PV is a hostPath volume'),
    });
  });

  it('skips a PVC its pod opts in when the backup excludes persistentvolumeclaims', () => {
    const decision = decideVolumeAction({
      subject: claim({ pods: [pod({ annotations: { [OPT_IN]: 'storage' } })] }),
      settings: { pvcsIncluded: false },
    });
    expect(decision).toMatchObject({
      action: 'skip',
      reason: expect.stringContaining('excludes persistentvolumeclaims'),
    });
  });

  it('skips an unbound PVC', () => {
    const pending = pvcObj('data', { spec: {}, status: { phase: 'Pending' } });
    expect(decideVolumeAction({ subject: { kind: 'claim', pvc: pending } })).toMatchObject({
      action: 'skip',
      approach: 'any',
      reason: expect.stringContaining('not bound to a PV'),
    });
  });
});

describe('snapshot method', () => {
  it('takes a CSI snapshot of a CSI PV and still names its EBS volume', () => {
    expect(decideVolumeAction({ subject: claim() })).toMatchObject({
      action: 'snapshot',
      method: 'csi',
      ebsVolumeId: 'vol-0abc',
      moveData: false,
    });
  });

  it('takes a native snapshot of an in-tree EBS PV', () => {
    expect(decideVolumeAction({ subject: claim({ pv: inTreePv() }) })).toMatchObject({
      action: 'snapshot',
      method: 'native',
      ebsVolumeId: 'vol-0def',
      moveData: false,
    });
  });

  it('asks the data mover to move every EBS snapshot under snapshotMoveData, CSI or native', () => {
    const csi = decideVolumeAction({ subject: claim(), settings: { snapshotMoveData: true } });
    expect(csi).toMatchObject({ method: 'csi', ebsVolumeId: 'vol-0abc', moveData: true });
    expect(csi).not.toHaveProperty('moveDataRefused');
    expect(
      decideVolumeAction({ subject: claim({ pv: inTreePv() }), settings: { snapshotMoveData: true } }),
    ).toMatchObject({ method: 'native', ebsVolumeId: 'vol-0def', moveData: true });
    expect(decideVolumeAction({ subject: claim({ pv: inTreePv() }) })).toMatchObject({ moveData: false });
  });

  it('keeps the CSI snapshot of another driver under snapshotMoveData, saying why its data is not moved', () => {
    const efs = {
      metadata: { name: 'pv-data' },
      spec: {
        capacity: { storage: '5Gi' },
        csi: { driver: 'efs.csi.aws.com', volumeHandle: 'fs-0abc::fsap-0def' },
        claimRef: { namespace: 'app', name: 'data' },
      },
    };
    expect(decideVolumeAction({ subject: claim({ pv: efs }), settings: { snapshotMoveData: true } })).toEqual(
      {
        action: 'snapshot',
        method: 'csi',
        moveData: false,
        moveDataRefused:
          'the data mover reads EBS snapshots only, and CSI driver efs.csi.aws.com is not ebs.csi.aws.com: its CSI snapshot is kept instead',
        reason: 'snapshotVolumes is not set to false',
      },
    );
  });

  it('skips a PV no snapshotter can snapshot, in Velero words', () => {
    expect(decideVolumeAction({ subject: claim({ pv: nfsPv() }) })).toMatchObject({
      action: 'skip',
      approach: 'volumeSnapshot',
      reason: expect.stringMatching(/^no applicable volumesnapshotter found/),
    });
  });

  it('decides a PV alone by its claimRef for the pods that mount it', () => {
    const decision = decideVolumeAction({
      subject: { kind: 'claim', pv: ebsCsiPv(), pods: [pod({ annotations: { [OPT_IN]: 'storage' } })] },
    });
    expect(decision.action).toBe('fs-backup');
  });
});

describe('pod volumes of other types', () => {
  const emptyDirPod = (annotations?: Record<string, string>): Obj =>
    pod({
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'creds', secret: { secretName: 's' } },
      ],
      ...(annotations ? { annotations } : {}),
    });

  it('backs up an opted-in emptyDir by fs-backup', () => {
    const decision = decideVolumeAction({
      subject: { kind: 'pod-volume', pod: emptyDirPod({ [OPT_IN]: 'scratch' }), volumeName: 'scratch' },
    });
    expect(decision).toMatchObject({ action: 'fs-backup', pod: { volumeName: 'scratch' } });
  });

  it('skips an emptyDir nothing selects', () => {
    const decision = decideVolumeAction({
      subject: { kind: 'pod-volume', pod: emptyDirPod(), volumeName: 'scratch' },
    });
    expect(decision).toMatchObject({ action: 'skip', approach: 'podvolume' });
  });

  it('never backs up a secret volume by fs-backup, even under defaultVolumesToFsBackup or a policy', () => {
    const subject: VolumeSubject = { kind: 'pod-volume', pod: emptyDirPod(), volumeName: 'creds' };
    expect(decideVolumeAction({ subject, settings: { defaultVolumesToFsBackup: true } })).toMatchObject({
      action: 'skip',
      reason: expect.stringContaining('secret volumes are backed up as Secret objects'),
    });
    expect(decideVolumeAction({ subject, policy: catchAll('fs-backup') })).toMatchObject({
      action: 'skip',
      approach: 'podvolume',
    });
  });

  it('skips a pod volume a policy wants snapshotted: only PVs can be', () => {
    const decision = decideVolumeAction({
      subject: { kind: 'pod-volume', pod: emptyDirPod(), volumeName: 'scratch' },
      policy: {
        version: 'v1',
        volumePolicies: [{ conditions: { volumeTypes: ['emptyDir'] }, action: { type: 'snapshot' } }],
      },
    });
    expect(decision).toMatchObject({ action: 'skip', approach: 'volumeSnapshot', policyIndex: 0 });
  });
});

describe('policy precedence (property)', () => {
  it('a matching policy decides the same way whatever the legacy settings and annotations', () => {
    const settings = fc.record({
      snapshotVolumes: fc.constantFrom(undefined, null, true, false),
      defaultVolumesToFsBackup: fc.constantFrom(undefined, null, true, false),
    });
    const annotations = fc.dictionary(
      fc.constantFrom(OPT_IN, OPT_OUT),
      fc.constantFrom('storage', 'other', 'storage,other'),
    );
    const pvs = fc.constantFrom(ebsCsiPv(), inTreePv(), nfsPv(), hostPathPv());
    fc.assert(
      fc.property(
        fc.constantFrom<VolumeActionType>('skip', 'snapshot', 'fs-backup'),
        settings,
        annotations,
        pvs,
        (type, s, a, pv) => {
          const subject = (withAnnotations: boolean): VolumeSubject =>
            claim({ pv, pods: [pod(withAnnotations ? { annotations: a } : {})] });
          const reference = decideVolumeAction({ subject: subject(false), policy: catchAll(type) });
          const decided = decideVolumeAction({ subject: subject(true), policy: catchAll(type), settings: s });
          expect(decided).toEqual(reference);
          expect(decided.action === type || decided.action === 'skip').toBe(true);
        },
      ),
    );
  });
});
