/**
 * Whether a restored workload is ready, as `kubectl rollout status` and `kubectl wait` judge it:
 * a Deployment or StatefulSet once its controller has seen its latest spec and every replica it
 * asks for is available (ready, for a StatefulSet); a PersistentVolumeClaim once it is Bound.
 * Returns why not, for the drill's report of what it still waits on. Pure.
 */
import type { Readiness } from './expected-items.js';

interface WorkloadView {
  readonly metadata?: { readonly generation?: number };
  readonly spec?: { readonly replicas?: number };
  readonly status?: {
    readonly phase?: string;
    readonly observedGeneration?: number;
    readonly replicas?: number;
    readonly availableReplicas?: number;
    readonly readyReplicas?: number;
    readonly updatedReplicas?: number;
  };
}

/** undefined when ready; otherwise what is still missing, in a few words. */
export function notReadyBecause(options: {
  readonly readiness: Readiness;
  readonly kind: string;
  readonly live: Record<string, unknown>;
}): string | undefined {
  const live = options.live as WorkloadView;
  const status = live.status ?? {};
  if (options.readiness === 'bound')
    return status.phase === 'Bound' ? undefined : `phase ${status.phase ?? 'unknown'}, not Bound`;
  if ((status.observedGeneration ?? 0) < (live.metadata?.generation ?? 0))
    return 'its controller has not seen its latest spec';
  const wanted = live.spec?.replicas ?? 1;
  const have = options.kind === 'StatefulSet' ? status.readyReplicas : status.availableReplicas;
  return (have ?? 0) >= wanted ? undefined : `${have ?? 0} of ${wanted} replicas available`;
}
