/**
 * What the volumes of one ItemBlock add to its message result: a log line for each volume
 * handled (snapshot started, files to read, skipped) and an error or warning where the backup
 * is missing something (a snapshot that could not start, a volume fs-backup cannot reach, a pod
 * volume the data mover never reads). Only records: never decides or starts anything.
 */

import type { HandledVolumeRecord } from '../../shared/contracts/backup-volumes.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import type { VolumeDecision } from '../../shared/domain/volumes/policy.js';
import type { Clock } from '../../shared/ports/clock.js';

type Scope = Parameters<typeof resultOf>[0]['scope'];

/** One volume handled, as the log names it. */
export interface HandledVolume {
  readonly entry: HandledVolumeRecord;
  readonly decision: VolumeDecision;
  /** `PVC <namespace>/<name>` or `PV <name>`. */
  readonly who: string;
  readonly fields: Record<string, string>;
  /** The PVC's namespace: its errors and warnings are the namespace's, else the cluster's. */
  readonly namespace: string | undefined;
}

export class VolumeReport {
  readonly log: LogEvent[] = [];
  results: Results = emptyResults;

  constructor(private readonly options: { backupName: string; clock: Clock }) {}

  time(): string {
    return this.options.clock.now().toISOString();
  }

  note(event: { level: LogEvent['level']; msg: string; fields: Record<string, string> }): void {
    this.log.push({
      time: this.time(),
      level: event.level,
      msg: event.msg,
      fields: { backup: this.options.backupName, ...event.fields },
    });
  }

  /** A pod volume sent to fs-backup: warned about, since the data mover reads only PVs. */
  podVolumeNotBackedUp(p: { pod: string; volume: string; decision: VolumeDecision }): void {
    const msg = `pod ${p.pod} volume "${p.volume}" is selected for fs-backup (${p.decision.reason}) and is not backed up: the data mover reads only PersistentVolumes, never a pod's own volumes`;
    this.note({ level: 'warning', msg, fields: { pod: p.pod, volume: p.volume } });
    const namespace = p.pod.split('/')[0] ?? '';
    this.warn({ namespace }, msg);
  }

  /** What was decided and started for one volume. */
  volumeHandled(volume: HandledVolume): void {
    const { entry, decision, who, fields } = volume;
    const scope: Scope = volume.namespace ? { namespace: volume.namespace } : 'cluster';
    if (entry.error) {
      const msg = `Snapshot of ${who} could not be started: ${entry.error}`;
      this.note({ level: 'error', msg, fields });
      this.results = mergeResults(this.results, { errors: resultOf({ scope, message: msg }), warnings: {} });
    } else if (entry.operation) {
      const moving = decision.action === 'snapshot' && decision.moveData;
      this.note({
        level: 'info',
        msg: `Started ${entry.operation.method === 'native' ? 'native EBS' : 'CSI'} snapshot of ${who}${moving ? '; the data mover copies it into the repository once it completes' : ''}`,
        fields: { ...fields, operation: entry.operation.operationId },
      });
      if (decision.action === 'snapshot' && decision.moveDataRefused) {
        const msg = `${who}: snapshotMoveData does not apply: ${decision.moveDataRefused}`;
        this.note({ level: 'warning', msg, fields });
        this.warn(scope, msg);
      }
    } else if (entry.files) {
      this.note({
        level: 'info',
        msg: `${who}: the data mover reads its files from ${entry.files.path} (fs-backup)`,
        fields,
      });
    } else if (entry.filesUnreachable) {
      const msg = `${who} is not backed up: selected for fs-backup (${decision.reason}), but ${entry.filesUnreachable}`;
      this.note({ level: 'warning', msg, fields });
      this.warn(scope, msg);
    } else {
      this.note({
        level: 'info',
        msg: `Skipped the snapshot of ${who}: ${decision.action === 'skip' ? decision.reason : decision.action}`,
        fields,
      });
    }
  }

  private warn(scope: Scope, message: string): void {
    this.results = mergeResults(this.results, { errors: {}, warnings: resultOf({ scope, message }) });
  }
}
