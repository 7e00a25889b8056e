/**
 * The volumes of one ItemBlock, handled between its pre and post hooks as Velero's item
 * backupper does: each PVC (with its PV) and each PV no PVC of the block claims is decided by
 * the volume policy engine (resource policy first, then the legacy annotations and
 * `snapshotVolumes`), and a snapshot is started where one is chosen (volume-snapshots.ts). Pod
 * volumes opted into fs-backup are reported. What was decided and started is written as the
 * block's volume record, read by VolumeOperations and FinalizeBackup. A snapshotMoveData volume
 * is snapshotted as any other; VolumeOperations hands the snapshot to the data mover once it
 * completes. An fs-backup volume is recorded with the directory the data mover reads, when it can
 * reach one (a local PV's directory under `lifeboat --local`), else with the precise reason it
 * cannot, and warned about: never dropped.
 * Snapshot method: an EBS volume (in-tree or `ebs.csi.aws.com`) gets a CSI VolumeSnapshot when
 * the cluster has a VolumeSnapshotClass for its driver (what Velero does with EnableCSI),
 * otherwise a native EBS snapshot through EC2 (Velero with the AWS plugin). A CSI volume of
 * another driver gets a VolumeSnapshot when the cluster serves the snapshot API (failing with
 * Velero's reason when no class serves its driver), and is skipped with the reason otherwise.
 */

import type { BlockItem } from '../../shared/contracts/backup-run.js';
import type {
  BlockVolumes,
  HandledVolumeRecord,
  VolumeSettings,
} from '../../shared/contracts/backup-volumes.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import type { SnapshotClassFacts } from '../../shared/domain/volumes/csi-snapshot-class.js';
import { claimFactsOf, persistentVolumeFactsOf } from '../../shared/domain/volumes/info.js';
import { decideVolumeAction, type VolumeDecision } from '../../shared/domain/volumes/policy.js';
import type { CsiSnapshots } from '../../shared/ports/csi-snapshots.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { readVolumeSettings } from '../common/volume-settings.js';
import { type SnapshotStartDeps, startCsiSnapshot, startNativeSnapshot } from './volume-snapshots.js';

type KubeObject = Readonly<Record<string, unknown>>;
const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Which volume files the data mover can read for fs-backup: `local-paths`, a local PV's
 * directory on this machine (`lifeboat --local`, where the data mover is a child process); unset,
 * none (on Fargate no pod volume is mounted into the task).
 */
export type FileAccess = 'local-paths';

export interface BlockVolumesDeps extends Omit<SnapshotStartDeps, 'csi'> {
  readonly store: ObjectStore;
  readonly fileAccess?: FileAccess;
  readonly snapshotter?: Snapshotter;
  /** CSI snapshots on the backed-up cluster, by its name; asked for only when a block has a CSI PV. */
  readonly csiFor?: (cluster: string) => Promise<CsiSnapshots>;
}

const isCore = (item: BlockItem, resource: string): boolean =>
  item.ref.group === '' && item.ref.resource === resource;

/** Pod volumes that are not PVCs but that the policy or annotations send to fs-backup. */
function podVolumeDecisions(options: {
  pods: readonly KubeObject[];
  settings: VolumeSettings;
}): { pod: string; volume: string; decision: VolumeDecision }[] {
  const out: { pod: string; volume: string; decision: VolumeDecision }[] = [];
  for (const pod of options.pods) {
    const volumes = record(pod.spec).volumes;
    for (const volume of Array.isArray(volumes) ? volumes.map(record) : []) {
      if (record(volume.persistentVolumeClaim).claimName !== undefined) continue;
      const decision = decideVolumeAction({
        subject: { kind: 'pod-volume', pod, volumeName: text(volume.name) },
        policy: options.settings.policy,
        settings: options.settings,
      });
      const meta = record(pod.metadata);
      if (decision.action === 'fs-backup')
        out.push({ pod: `${text(meta.namespace)}/${text(meta.name)}`, volume: text(volume.name), decision });
    }
  }
  return out;
}

/**
 * Decides and starts the snapshots of the block's volumes and writes the block's volume record.
 * Returns the log lines and errors/warnings for the message result; nothing when the block has
 * no PVC, PV or pod.
 */
export async function backUpBlockVolumes(options: {
  backup: { name: string; runId: string };
  blockId: string;
  items: readonly BlockItem[];
  deps: BlockVolumesDeps;
}): Promise<{ log: LogEvent[]; results: Results }> {
  const { backup, items, deps } = options;
  const claims = items.filter((i) => isCore(i, 'persistentvolumeclaims'));
  const volumes = items.filter((i) => isCore(i, 'persistentvolumes'));
  const podItems = items.filter((i) => isCore(i, 'pods'));
  if (claims.length === 0 && volumes.length === 0 && podItems.length === 0)
    return { log: [], results: emptyResults };
  const settings = await readVolumeSettings({
    run: backup,
    store: deps.store,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  const parse = (i: BlockItem): KubeObject => JSON.parse(i.json) as KubeObject;
  const pods = podItems.map(parse);
  const log: LogEvent[] = [];
  let results: Results = emptyResults;
  const time = () => deps.clock.now().toISOString();
  const note = (event: { level: LogEvent['level']; msg: string; fields: Record<string, string> }) =>
    log.push({
      time: time(),
      level: event.level,
      msg: event.msg,
      fields: { backup: backup.name, ...event.fields },
    });

  for (const p of podVolumeDecisions({ pods, settings })) {
    const msg = `pod ${p.pod} volume "${p.volume}" is selected for fs-backup (${p.decision.reason}) and is not backed up: the data mover reads only PersistentVolumes, never a pod's own volumes`;
    note({ level: 'warning', msg, fields: { pod: p.pod, volume: p.volume } });
    const namespace = p.pod.split('/')[0] ?? '';
    results = mergeResults(results, {
      errors: {},
      warnings: resultOf({ scope: { namespace }, message: msg }),
    });
  }
  if (claims.length === 0 && volumes.length === 0) return { log, results };

  const pvcObjects = claims.map(parse);
  const pvObjects = new Map(volumes.map((i) => [i.ref.name, parse(i)]));
  const blockRecord: BlockVolumes = {
    claims: pvcObjects.map(claimFactsOf),
    persistentVolumes: [...pvObjects.values()].map(persistentVolumeFactsOf),
    handled: [],
  };
  const subjects: { pvc?: KubeObject; pv?: KubeObject }[] = [];
  const claimed = new Set<string>();
  for (const pvc of pvcObjects) {
    const volumeName = text(record(pvc.spec).volumeName);
    const pv = volumeName ? pvObjects.get(volumeName) : undefined;
    if (pv) claimed.add(volumeName);
    subjects.push({ pvc, ...(pv ? { pv } : {}) });
  }
  for (const [name, pv] of pvObjects) if (!claimed.has(name)) subjects.push({ pv });

  let classes: readonly SnapshotClassFacts[] | undefined;
  let csi: CsiSnapshots | undefined;
  // A cluster that does not serve the snapshot API is Velero without EnableCSI: no CSI path at all.
  const csiReady = async (): Promise<boolean> => {
    if (!deps.csiFor || !settings.cluster) return false;
    if (!csi) {
      csi = await deps.csiFor(settings.cluster);
      classes = await csi.snapshotClasses(deps.signal ? { signal: deps.signal } : {});
    }
    return classes !== undefined;
  };

  for (const subject of subjects) {
    const pvcMeta = record(subject.pvc?.metadata);
    const pvName = text(record(subject.pv?.metadata).name) || text(record(subject.pvc?.spec).volumeName);
    const names = {
      ...(pvName && subject.pv ? { pvName } : {}),
      ...(subject.pvc ? { pvcNamespace: text(pvcMeta.namespace), pvcName: text(pvcMeta.name) } : {}),
    };
    let decision = decideVolumeAction({
      subject: { kind: 'claim', ...subject, pods },
      policy: settings.policy,
      settings,
    });
    const files =
      decision.action === 'fs-backup'
        ? filesOf({ pv: subject.pv, pod: decision.pod, pods, fileAccess: deps.fileAccess })
        : {};
    const handled = await handleDecision({
      backup,
      settings,
      subject,
      decision,
      deps,
      csiReady,
      csi: () => csi,
      classes: () => classes ?? [],
    });
    decision = handled.decision;
    const entry: HandledVolumeRecord = {
      ...names,
      decision,
      ...handled.started,
      ...files,
      ...(decision.action === 'fs-backup' ? { startedAt: time() } : {}),
    };
    blockRecord.handled.push(entry);
    const who = subject.pvc ? `PVC ${names.pvcNamespace}/${names.pvcName}` : `PV ${pvName}`;
    const fields = {
      ...(names.pvcName ? { pvc: `${names.pvcNamespace}/${names.pvcName}` } : {}),
      ...(pvName ? { pv: pvName } : {}),
    };
    if (entry.error) {
      const msg = `Snapshot of ${who} could not be started: ${entry.error}`;
      note({ level: 'error', msg, fields });
      const scope = names.pvcNamespace ? { namespace: names.pvcNamespace } : ('cluster' as const);
      results = mergeResults(results, { errors: resultOf({ scope, message: msg }), warnings: {} });
    } else if (entry.operation) {
      const moving = decision.action === 'snapshot' && decision.moveData;
      note({
        level: 'info',
        msg: `Started ${entry.operation.method === 'native' ? 'native EBS' : 'CSI'} snapshot of ${who}${moving ? '; the data mover copies it into the repository once it completes' : ''}`,
        fields: { ...fields, operation: entry.operation.operationId },
      });
      if (decision.action === 'snapshot' && decision.moveDataRefused) {
        const msg = `${who}: snapshotMoveData does not apply: ${decision.moveDataRefused}`;
        note({ level: 'warning', msg, fields });
        const scope = names.pvcNamespace ? { namespace: names.pvcNamespace } : ('cluster' as const);
        results = mergeResults(results, { errors: {}, warnings: resultOf({ scope, message: msg }) });
      }
    } else if (entry.files) {
      note({
        level: 'info',
        msg: `${who}: the data mover reads its files from ${entry.files.path} (fs-backup)`,
        fields,
      });
    } else if (entry.filesUnreachable) {
      const msg = `${who} is not backed up: selected for fs-backup (${decision.reason}), but ${entry.filesUnreachable}`;
      note({ level: 'warning', msg, fields });
      const scope = names.pvcNamespace ? { namespace: names.pvcNamespace } : ('cluster' as const);
      results = mergeResults(results, { errors: {}, warnings: resultOf({ scope, message: msg }) });
    } else {
      note({
        level: 'info',
        msg: `Skipped the snapshot of ${who}: ${decision.action === 'skip' ? decision.reason : decision.action}`,
        fields,
      });
    }
  }
  await deps.store.put(backupWorkKeys(backup).blockVolumes(options.blockId), JSON.stringify(blockRecord), {
    contentType: 'application/json',
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  return { log, results };
}

type Started = Awaited<ReturnType<typeof startNativeSnapshot>>;

/** Carries out a snapshot decision: the method Lifeboat takes, and the snapshot started. */
async function handleDecision(options: {
  backup: { name: string };
  settings: VolumeSettings;
  subject: { pvc?: KubeObject; pv?: KubeObject };
  decision: VolumeDecision;
  deps: BlockVolumesDeps;
  csiReady: () => Promise<boolean>;
  csi: () => CsiSnapshots | undefined;
  classes: () => readonly SnapshotClassFacts[];
}): Promise<{ decision: VolumeDecision; started: Started | Record<string, never> }> {
  const { decision, subject, settings, deps } = options;
  if (decision.action !== 'snapshot' || !subject.pv) return { decision, started: {} };
  const driver = text(record(record(subject.pv.spec).csi).driver);
  if (driver && subject.pvc && (await options.csiReady())) {
    const hasClass = options.classes().some((c) => c.driver === driver);
    const csi = options.csi();
    if (csi && (hasClass || !decision.ebsVolumeId)) {
      return {
        decision: { ...decision, method: 'csi' },
        started: await startCsiSnapshot({
          backupName: options.backup.name,
          settings,
          pvc: subject.pvc,
          driver,
          classes: options.classes(),
          deps: { ...deps, csi },
        }),
      };
    }
  }
  if (decision.ebsVolumeId) {
    return {
      decision: {
        ...decision,
        method: 'native',
        ...(decision.method === 'csi'
          ? {
              reason: `${decision.reason}; no VolumeSnapshotClass for ${driver}, so the EBS volume is snapshotted through EC2`,
            }
          : {}),
      },
      started: await startNativeSnapshot({
        backupName: options.backup.name,
        settings,
        pv: subject.pv,
        volumeId: decision.ebsVolumeId,
        deps,
      }),
    };
  }
  return {
    decision: {
      action: 'skip',
      approach: 'csiSnapshot',
      reason: `${decision.reason}, but no VolumeSnapshotClass is available for CSI driver ${driver} (is the snapshot.storage.k8s.io API served?)`,
      ...(decision.policyIndex === undefined ? {} : { policyIndex: decision.policyIndex }),
    },
    started: {},
  };
}

/**
 * Where the data mover reads an fs-backup volume's files, or why it cannot: under
 * `lifeboat --local` the directory of a local PV (`spec.local.path`) on this machine; in AWS
 * nothing yet, since a Fargate task mounts no pod volume (EFS would need a task definition per
 * file system).
 */
function filesOf(options: {
  pv: KubeObject | undefined;
  pod: { namespace: string; name: string };
  pods: readonly KubeObject[];
  fileAccess: FileAccess | undefined;
}): Pick<HandledVolumeRecord, 'files' | 'filesUnreachable'> {
  if (options.fileAccess !== 'local-paths')
    return {
      filesUnreachable:
        'no data mover of this run can reach pod volumes: a Fargate task mounts none, and fs-backup reads only local PVs under lifeboat --local with its data mover (snapshotMoveData moves EBS volumes)',
    };
  const spec = record(options.pv?.spec);
  const path = text(record(spec.local).path);
  if (!options.pv || !path.startsWith('/'))
    return {
      filesUnreachable: `under lifeboat --local the data mover reads only local PVs (spec.local.path) on this machine, and this volume is ${options.pv ? `a ${volumeSourceOf(spec) ?? 'unknown'} volume` : 'not bound to a PV'}`,
    };
  const pod = options.pods.find(
    (p) =>
      text(record(p.metadata).namespace) === options.pod.namespace &&
      text(record(p.metadata).name) === options.pod.name,
  );
  const nodeName = text(record(pod?.spec).nodeName);
  return { files: { path, ...(nodeName ? { nodeName } : {}) } };
}

/** The PV's volume source (`csi`, `nfs`, `hostPath`, …), as volume policies name them. */
function volumeSourceOf(spec: Record<string, unknown>): string | undefined {
  const nonSources = new Set([
    'accessModes',
    'capacity',
    'claimRef',
    'mountOptions',
    'nodeAffinity',
    'persistentVolumeReclaimPolicy',
    'storageClassName',
    'volumeMode',
    'volumeAttributesClassName',
  ]);
  return Object.keys(spec).find((k) => !nonSources.has(k) && typeof spec[k] === 'object');
}
