/**
 * Where the data mover reads an fs-backup volume's files, or the precise reason it cannot: under
 * `lifeboat --local` the directory of a local PV on this machine; in AWS nothing yet. Reads only
 * the PV and pod objects it is given; never starts anything, never drops a volume silently.
 */

import type { HandledVolumeRecord } from '../../shared/contracts/backup-volumes.js';

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

/**
 * Where the data mover reads an fs-backup volume's files, or why it cannot: under
 * `lifeboat --local` the directory of a local PV (`spec.local.path`) on this machine; in AWS
 * nothing yet, since a Fargate task mounts no pod volume (EFS would need a task definition per
 * file system).
 */
export function filesOf(options: {
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
