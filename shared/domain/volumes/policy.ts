/**
 * How one volume of a backup is handled: skipped, snapshotted (CSI or native EBS) or backed up
 * file by file (fs-backup), with a reason a person can read. Velero 1.14+ precedence
 * (`internal/volumehelper/volume_policy_helper.go`, design "Extend VolumePolicies to support more
 * actions"): a matching volume policy decides, first match wins, and outranks every legacy
 * setting; with no match, the legacy rules apply: pod annotations
 * `backup.velero.io/backup-volumes` (opt-in) and `backup.velero.io/backup-volumes-excludes`
 * (opt-out under `defaultVolumesToFsBackup`) choose fs-backup, which outranks a snapshot; else
 * the PV is snapshotted unless `snapshotVolumes` is false.
 * Pure: reads objects as the apiserver serves them, never throws, never does I/O.
 */

import { matchVolumePolicy, type ResourcePolicy, type VolumeFacts, volumeFactsOf } from './conditions.js';
import { ebsVolumeIdOf } from './ebs-volume.js';

export * from './conditions.js';

type KubeObject = Readonly<Record<string, unknown>>;

export const VOLUMES_TO_BACKUP_ANNOTATION = 'backup.velero.io/backup-volumes';
export const VOLUMES_TO_EXCLUDE_ANNOTATION = 'backup.velero.io/backup-volumes-excludes';

/** The volume being decided: a PVC and/or its PV with the backup's pods using it, or a pod's own volume. */
export type VolumeSubject =
  | {
      readonly kind: 'claim';
      readonly pvc?: KubeObject;
      readonly pv?: KubeObject;
      /** Pods in the backup; those whose volumes claim this PVC are considered. */
      readonly pods?: readonly KubeObject[];
    }
  | { readonly kind: 'pod-volume'; readonly pod: KubeObject; readonly volumeName: string };

/** The backup's legacy volume settings (Velero BackupSpec). */
export interface LegacyVolumeSettings {
  readonly snapshotVolumes?: boolean | null;
  readonly defaultVolumesToFsBackup?: boolean | null;
  readonly snapshotMoveData?: boolean | null;
  /** False when the backup's filters exclude persistentvolumeclaims (Velero backupExcludePVC). */
  readonly pvcsIncluded?: boolean;
}

/** Velero's skipped-PV approaches (pkg/backup/pv_skip_tracker.go); they prefix skippedReason. */
export type SkipApproach = 'podvolume' | 'csiSnapshot' | 'volumeSnapshot' | 'any';

export interface PodVolumeRef {
  readonly namespace: string;
  readonly name: string;
  readonly volumeName: string;
}

export type VolumeDecision =
  | {
      readonly action: 'skip';
      readonly approach: SkipApproach;
      readonly reason: string;
      readonly policyIndex?: number;
    }
  | {
      readonly action: 'snapshot';
      /** `csi` when the PV has spec.csi, else `native` (an EBS volume id was derived). */
      readonly method: 'csi' | 'native';
      /** The EBS volume behind the PV whenever one can be derived (also for ebs.csi.aws.com). */
      readonly ebsVolumeId?: string;
      /**
       * snapshotMoveData asks the data mover to copy the snapshot's data into the repository.
       * Lifeboat: whenever the snapshot is an EBS snapshot (native, or CSI with ebs.csi.aws.com),
       * since the data mover reads snapshots with the EBS direct APIs.
       */
      readonly moveData: boolean;
      /** Why snapshotMoveData does not apply to this volume (a CSI volume of another driver). */
      readonly moveDataRefused?: string;
      readonly reason: string;
      readonly policyIndex?: number;
    }
  | {
      readonly action: 'fs-backup';
      readonly pod: PodVolumeRef;
      readonly reason: string;
      readonly policyIndex?: number;
    };

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

function podRef(pod: KubeObject, volumeName: string): PodVolumeRef {
  const meta = record(pod.metadata) ?? {};
  return { namespace: text(meta.namespace), name: text(meta.name), volumeName };
}

const describePod = (p: PodVolumeRef): string => `pod ${p.namespace}/${p.name} volume "${p.volumeName}"`;

function podVolumes(pod: KubeObject): Record<string, unknown>[] {
  const volumes = record(pod.spec)?.volumes;
  return Array.isArray(volumes) ? volumes.map((v) => record(v) ?? {}) : [];
}

function annotationList(pod: KubeObject, key: string): string[] | undefined {
  const value = record(record(pod.metadata)?.annotations)?.[key];
  // Velero splits on "," without trimming: "a, b" names "a" and " b".
  return typeof value === 'string' && value !== '' ? value.split(',') : undefined;
}

/** Why a pod volume can never be backed up by fs-backup (Velero shouldIncludeVolumeInBackup), if so. */
function fsBackupRefusal(options: {
  volume: Record<string, unknown>;
  pv: KubeObject | undefined;
  settings: LegacyVolumeSettings;
}): string | undefined {
  const { volume, pv, settings } = options;
  if (record(volume.hostPath)) return 'hostPath volumes are not mounted under /var/lib/kubelet/pods';
  if (record(volume.secret)) return 'secret volumes are backed up as Secret objects';
  if (record(volume.configMap)) return 'configMap volumes are backed up as ConfigMap objects';
  if (record(volume.projected)) return 'projected volumes hold only data from the Kubernetes API';
  if (record(volume.downwardAPI)) return 'downwardAPI volumes hold only data from the Kubernetes API';
  if (text(volume.name).startsWith('default-token'))
    return 'the default service account token is not backed up';
  if (record(volume.persistentVolumeClaim) && settings.pvcsIncluded === false) {
    return 'the backup excludes persistentvolumeclaims';
  }
  // Velero's pod volume backupper refuses a PVC bound to a hostPath PV too.
  if (pv && record(record(pv.spec)?.hostPath)) return 'the PV is a hostPath volume';
  return undefined;
}

/** Legacy opt-in/opt-out (Velero shouldPerformFSBackupLegacy): the reason when it selects fs-backup. */
function legacyFsBackupReason(options: {
  pod: KubeObject;
  ref: PodVolumeRef;
  settings: LegacyVolumeSettings;
}): string | undefined {
  const { pod, ref, settings } = options;
  if (settings.defaultVolumesToFsBackup === true) {
    const excluded = annotationList(pod, VOLUMES_TO_EXCLUDE_ANNOTATION) ?? [];
    return excluded.includes(ref.volumeName)
      ? undefined
      : `defaultVolumesToFsBackup is set and ${describePod(ref)} is not in ${VOLUMES_TO_EXCLUDE_ANNOTATION}`;
  }
  const included = annotationList(pod, VOLUMES_TO_BACKUP_ANNOTATION) ?? [];
  return included.includes(ref.volumeName)
    ? `${describePod(ref)} is opted in by ${VOLUMES_TO_BACKUP_ANNOTATION}`
    : undefined;
}

interface PodUse {
  readonly pod: KubeObject;
  readonly ref: PodVolumeRef;
  readonly volume: Record<string, unknown>;
}

/** The pod volumes (in pod order) that mount the subject. */
function podUsesOf(subject: VolumeSubject): PodUse[] {
  if (subject.kind === 'pod-volume') {
    const volume = podVolumes(subject.pod).find((v) => v.name === subject.volumeName) ?? {
      name: subject.volumeName,
    };
    return [{ pod: subject.pod, ref: podRef(subject.pod, subject.volumeName), volume }];
  }
  const pvcMeta = record(subject.pvc?.metadata);
  const claimRef = record(record(subject.pv?.spec)?.claimRef);
  const namespace = text(pvcMeta?.namespace) || text(claimRef?.namespace);
  const claim = text(pvcMeta?.name) || text(claimRef?.name);
  if (!claim) return [];
  const uses: PodUse[] = [];
  for (const pod of subject.pods ?? []) {
    if (text(record(pod.metadata)?.namespace) !== namespace) continue;
    for (const volume of podVolumes(pod)) {
      if (record(volume.persistentVolumeClaim)?.claimName === claim) {
        uses.push({ pod, ref: podRef(pod, text(volume.name)), volume });
      }
    }
  }
  return uses;
}

function snapshotDecision(options: {
  subject: VolumeSubject;
  settings: LegacyVolumeSettings;
  reason: string;
  policyIndex?: number;
}): VolumeDecision {
  const { subject, settings, reason } = options;
  const index = options.policyIndex === undefined ? {} : { policyIndex: options.policyIndex };
  if (subject.kind === 'pod-volume') {
    return {
      action: 'skip',
      approach: 'volumeSnapshot',
      reason: `${reason}, but a pod's own volume cannot be snapshotted`,
      ...index,
    };
  }
  if (!subject.pv) {
    return {
      action: 'skip',
      approach: 'any',
      reason: `${reason}, but the PVC is not bound to a PV`,
      ...index,
    };
  }
  const ebsVolumeId = ebsVolumeIdOf(subject.pv);
  const csi = record(record(subject.pv.spec)?.csi) !== undefined;
  if (!csi && !ebsVolumeId) {
    // Velero's words when no volume snapshotter returns a volume id.
    return {
      action: 'skip',
      approach: 'volumeSnapshot',
      reason: `no applicable volumesnapshotter found: the PV is neither a CSI nor an EBS volume (${reason})`,
      ...index,
    };
  }
  // Velero moves data only for CSI snapshots (kopia reads a volume made from the snapshot).
  // Lifeboat's data mover reads EBS snapshots themselves, native or CSI, and nothing else.
  const moveData = settings.snapshotMoveData === true && ebsVolumeId !== undefined;
  const driver = text(record(record(subject.pv.spec)?.csi)?.driver);
  return {
    action: 'snapshot',
    method: csi ? 'csi' : 'native',
    ...(ebsVolumeId ? { ebsVolumeId } : {}),
    moveData,
    ...(settings.snapshotMoveData === true && !moveData
      ? {
          moveDataRefused: `the data mover reads EBS snapshots only, and CSI driver ${driver} is not ebs.csi.aws.com: its CSI snapshot is kept instead`,
        }
      : {}),
    reason,
    ...index,
  };
}

/** The decision a matching volume policy makes (it outranks every legacy setting). */
function policyDecision(options: {
  subject: VolumeSubject;
  settings: LegacyVolumeSettings;
  uses: readonly PodUse[];
  pv: KubeObject | undefined;
  index: number;
  action: 'skip' | 'snapshot' | 'fs-backup';
}): VolumeDecision {
  const { subject, settings, uses, pv, index, action } = options;
  const which = `volumePolicies[${index}]`;
  if (action === 'skip') {
    return {
      action: 'skip',
      approach: 'any',
      reason: `matched action is 'skip' in chosen resource policies (${which})`,
      policyIndex: index,
    };
  }
  if (action === 'snapshot') {
    return snapshotDecision({
      subject,
      settings,
      reason: `${which} asks for a snapshot`,
      policyIndex: index,
    });
  }
  const refusals: string[] = [];
  for (const use of uses) {
    const refusal = fsBackupRefusal({ volume: use.volume, pv, settings });
    if (!refusal)
      return { action: 'fs-backup', pod: use.ref, reason: `${which} asks for fs-backup`, policyIndex: index };
    refusals.push(`${describePod(use.ref)}: ${refusal}`);
  }
  return {
    action: 'skip',
    approach: 'podvolume',
    reason:
      refusals.length > 0
        ? `${which} asks for fs-backup, which cannot back it up (${refusals.join('; ')})`
        : `${which} asks for fs-backup, but no pod in the backup mounts the volume`,
    policyIndex: index,
  };
}

/**
 * Decides how one volume is backed up. `policy` is the backup's resource policy, if any;
 * `settings` the backup's legacy volume fields.
 */
export function decideVolumeAction(options: {
  subject: VolumeSubject;
  policy?: ResourcePolicy | null;
  settings?: LegacyVolumeSettings;
}): VolumeDecision {
  const { subject, policy } = options;
  const settings = options.settings ?? {};
  const pv = subject.kind === 'claim' ? subject.pv : undefined;
  const uses = podUsesOf(subject);
  const match = policy ? matchVolumePolicy(policy, policyFactsOf(subject, uses)) : undefined;
  if (match) {
    return policyDecision({
      subject,
      settings,
      uses,
      pv,
      index: match.index,
      action: match.rule.action.type,
    });
  }
  return legacyDecision({ subject, settings, uses, pv });
}

/** What volume policy conditions look at: the PV and PVC, or the pod's own volume. */
function policyFactsOf(subject: VolumeSubject, uses: readonly PodUse[]): VolumeFacts {
  return subject.kind === 'claim'
    ? volumeFactsOf({
        ...(subject.pv ? { pv: subject.pv } : {}),
        ...(subject.pvc ? { pvc: subject.pvc } : {}),
      })
    : volumeFactsOf({ podVolume: uses[0]?.volume ?? {} });
}

/** No policy matched: legacy opt-in/opt-out first; a volume backed up by fs-backup is not snapshotted. */
function legacyDecision(options: {
  subject: VolumeSubject;
  settings: LegacyVolumeSettings;
  uses: readonly PodUse[];
  pv: KubeObject | undefined;
}): VolumeDecision {
  const { subject, settings, uses, pv } = options;
  const refusals: string[] = [];
  for (const use of uses) {
    const reason = legacyFsBackupReason({ pod: use.pod, ref: use.ref, settings });
    if (!reason) continue;
    const refusal = fsBackupRefusal({ volume: use.volume, pv, settings });
    if (!refusal) return { action: 'fs-backup', pod: use.ref, reason };
    refusals.push(`${reason}, but ${refusal}`);
  }
  if (subject.kind === 'pod-volume') {
    return {
      action: 'skip',
      approach: 'podvolume',
      reason: refusals[0] ?? 'no volume policy or pod annotation selects fs-backup for this pod volume',
    };
  }
  if (refusals.length > 0) {
    // Velero skips the snapshot of a PV whose pod opts it into fs-backup (shouldPerformFSBackupLegacy
    // alone), even when the pod volume backupper then refuses it (a hostPath PV, say).
    return { action: 'skip', approach: 'podvolume', reason: refusals.join('; ') };
  }
  if (settings.snapshotVolumes === false) {
    return {
      action: 'skip',
      approach: 'volumeSnapshot',
      reason: 'snapshotVolumes is false and neither a volume policy nor a pod annotation selects fs-backup',
    };
  }
  return snapshotDecision({
    subject,
    settings,
    reason:
      settings.snapshotVolumes === true ? 'snapshotVolumes is true' : 'snapshotVolumes is not set to false',
  });
}
