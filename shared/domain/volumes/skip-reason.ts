/**
 * Why a volume of a backup has no data in it, as its volumes-info entry says (Velero's
 * `skippedReason`, "<approach>: <reason>;"): the decision's own reason when it skipped the volume,
 * else why its chosen method did not run. Pure: never decides a volume's action itself.
 */
import type { SkipApproach, VolumeDecision } from './policy.js';

/** The skipped fields of a volumes-info entry; `unreachable`: why fs-backup could not read the files. */
export function skippedBecause(
  decision: VolumeDecision | undefined,
  unreachable?: string,
): { skipped: true; skippedReason: string } {
  const { approach, reason } = skipOf(decision, unreachable);
  // Velero's SerializeSkipReasons: "<approach>: <reason>;".
  return { skipped: true, skippedReason: `${approach}: ${reason};` };
}

function skipOf(
  decision: VolumeDecision | undefined,
  unreachable: string | undefined,
): { approach: SkipApproach; reason: string } {
  if (!decision) return { approach: 'any', reason: 'the backup made no decision for this volume' };
  if (decision.action === 'skip') return decision;
  if (decision.action === 'fs-backup') {
    return {
      approach: 'podvolume',
      reason: `selected for fs-backup (${decision.reason}) of pod ${decision.pod.namespace}/${decision.pod.name} volume "${decision.pod.volumeName}", but ${unreachable ?? 'the data mover did not read it'}`,
    };
  }
  return decision.method === 'csi'
    ? { approach: 'csiSnapshot', reason: `no CSI snapshot was taken (${decision.reason})` }
    : { approach: 'volumeSnapshot', reason: `no native snapshot was recorded (${decision.reason})` };
}
