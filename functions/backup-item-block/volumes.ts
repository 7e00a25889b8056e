/**
 * The volumes of one ItemBlock, handled between its pre and post hooks as Velero's item
 * backupper does: each PVC (with its PV) and each PV no PVC of the block claims is decided by
 * the volume policy engine (resource policy first, then the legacy annotations and
 * `snapshotVolumes`), and a snapshot is started where one is chosen (volume-snapshots.ts). Pod
 * volumes opted into fs-backup are reported (volume-report.ts). What was decided and started is
 * written as the block's volume record, read by VolumeOperations and FinalizeBackup. A
 * snapshotMoveData volume is snapshotted as any other; VolumeOperations hands the snapshot to the
 * data mover once it completes. An fs-backup volume is recorded with the directory the data mover
 * reads, when it can reach one (a local PV's directory under `lifeboat --local`), else with the
 * precise reason it cannot (volume-files.ts), and warned about: never dropped.
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
import { emptyResults, type Results } from '../../shared/domain/storage/results.js';
import type { SnapshotClassFacts } from '../../shared/domain/volumes/csi-snapshot-class.js';
import { claimFactsOf, persistentVolumeFactsOf } from '../../shared/domain/volumes/info.js';
import { decideVolumeAction, type VolumeDecision } from '../../shared/domain/volumes/policy.js';
import type { CsiSnapshots } from '../../shared/ports/csi-snapshots.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { readVolumeSettings } from '../common/volume-settings.js';
import { type FileAccess, filesOf } from './volume-files.js';
import { VolumeReport } from './volume-report.js';
import { type SnapshotStartDeps, startCsiSnapshot, startNativeSnapshot } from './volume-snapshots.js';

type KubeObject = Readonly<Record<string, unknown>>;
const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

export type { FileAccess } from './volume-files.js';

export interface BlockVolumesDeps extends Omit<SnapshotStartDeps, 'csi'> {
  readonly store: ObjectStore;
  readonly fileAccess?: FileAccess;
  readonly snapshotter?: Snapshotter;
  /** CSI snapshots on the backed-up cluster, by its name; asked for only when a block has a CSI PV. */
  readonly csiFor?: (cluster: string) => Promise<CsiSnapshots>;
}

const parse = (i: BlockItem): KubeObject => JSON.parse(i.json) as KubeObject;
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
  const pods = podItems.map(parse);
  const report = new VolumeReport({ backupName: backup.name, clock: deps.clock });
  for (const p of podVolumeDecisions({ pods, settings })) report.podVolumeNotBackedUp(p);
  if (claims.length === 0 && volumes.length === 0) return { log: report.log, results: report.results };

  const pvcObjects = claims.map(parse);
  const pvObjects = new Map(volumes.map((i) => [i.ref.name, parse(i)]));
  const blockRecord: BlockVolumes = {
    claims: pvcObjects.map(claimFactsOf),
    persistentVolumes: [...pvObjects.values()].map(persistentVolumeFactsOf),
    handled: [],
  };
  const context: VolumeContext = { backup, settings, pods, deps, csi: lazyCsi({ deps, settings }), report };
  for (const subject of volumeSubjects(pvcObjects, pvObjects)) {
    blockRecord.handled.push(await backUpVolume(subject, context));
  }
  await deps.store.put(backupWorkKeys(backup).blockVolumes(options.blockId), JSON.stringify(blockRecord), {
    contentType: 'application/json',
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  return { log: report.log, results: report.results };
}

/** A volume to decide: a PVC with the PV it is bound to (when in the block), or a PV no PVC claims. */
interface VolumeSubject {
  readonly pvc?: KubeObject;
  readonly pv?: KubeObject;
}

/** What deciding and starting each volume of a block shares. */
interface VolumeContext {
  readonly backup: { name: string; runId: string };
  readonly settings: VolumeSettings;
  readonly pods: readonly KubeObject[];
  readonly deps: BlockVolumesDeps;
  readonly csi: CsiAccess;
  readonly report: VolumeReport;
}

/** Each PVC (with its PV), then each PV of the block no PVC of the block claims. */
function volumeSubjects(
  pvcObjects: readonly KubeObject[],
  pvObjects: ReadonlyMap<string, KubeObject>,
): VolumeSubject[] {
  const subjects: VolumeSubject[] = [];
  const claimed = new Set<string>();
  for (const pvc of pvcObjects) {
    const volumeName = text(record(pvc.spec).volumeName);
    const pv = volumeName ? pvObjects.get(volumeName) : undefined;
    if (pv) claimed.add(volumeName);
    subjects.push({ pvc, ...(pv ? { pv } : {}) });
  }
  for (const [name, pv] of pvObjects) if (!claimed.has(name)) subjects.push({ pv });
  return subjects;
}

/** The cluster's CSI snapshots and VolumeSnapshotClasses, asked for when a volume first needs them. */
interface CsiAccess {
  /** Whether the cluster serves the snapshot API. */
  readonly ready: () => Promise<boolean>;
  readonly csi: () => CsiSnapshots | undefined;
  readonly classes: () => readonly SnapshotClassFacts[];
}

function lazyCsi(options: { deps: BlockVolumesDeps; settings: VolumeSettings }): CsiAccess {
  const { deps, settings } = options;
  let classes: readonly SnapshotClassFacts[] | undefined;
  let csi: CsiSnapshots | undefined;
  // A cluster that does not serve the snapshot API is Velero without EnableCSI: no CSI path at all.
  const ready = async (): Promise<boolean> => {
    if (!deps.csiFor || !settings.cluster) return false;
    if (!csi) {
      csi = await deps.csiFor(settings.cluster);
      classes = await csi.snapshotClasses(deps.signal ? { signal: deps.signal } : {});
    }
    return classes !== undefined;
  };
  return { ready, csi: () => csi, classes: () => classes ?? [] };
}

/** Decides one volume, starts its snapshot where one is chosen, and reports what was done. */
async function backUpVolume(subject: VolumeSubject, context: VolumeContext): Promise<HandledVolumeRecord> {
  const { settings, pods, deps, report } = context;
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
    backup: context.backup,
    settings,
    subject,
    decision,
    deps,
    csi: context.csi,
  });
  decision = handled.decision;
  const entry: HandledVolumeRecord = {
    ...names,
    decision,
    ...handled.started,
    ...files,
    ...(decision.action === 'fs-backup' ? { startedAt: report.time() } : {}),
  };
  report.volumeHandled({
    entry,
    decision,
    who: subject.pvc ? `PVC ${names.pvcNamespace}/${names.pvcName}` : `PV ${pvName}`,
    fields: {
      ...(names.pvcName ? { pvc: `${names.pvcNamespace}/${names.pvcName}` } : {}),
      ...(pvName ? { pv: pvName } : {}),
    },
    namespace: names.pvcNamespace,
  });
  return entry;
}

type Started = Awaited<ReturnType<typeof startNativeSnapshot>>;

/** Carries out a snapshot decision: the method Lifeboat takes, and the snapshot started. */
async function handleDecision(options: {
  backup: { name: string };
  settings: VolumeSettings;
  subject: VolumeSubject;
  decision: VolumeDecision;
  deps: BlockVolumesDeps;
  csi: CsiAccess;
}): Promise<{ decision: VolumeDecision; started: Started | Record<string, never> }> {
  const { decision, subject, settings, deps } = options;
  if (decision.action !== 'snapshot' || !subject.pv) return { decision, started: {} };
  const driver = text(record(record(subject.pv.spec).csi).driver);
  if (driver && subject.pvc && (await options.csi.ready())) {
    const hasClass = options.csi.classes().some((c) => c.driver === driver);
    const csi = options.csi.csi();
    if (csi && (hasClass || !decision.ebsVolumeId)) {
      return {
        decision: { ...decision, method: 'csi' },
        started: await startCsiSnapshot({
          backupName: options.backup.name,
          settings,
          pvc: subject.pvc,
          driver,
          classes: options.csi.classes(),
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
