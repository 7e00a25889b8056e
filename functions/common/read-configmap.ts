/**
 * Reading a ConfigMap a request names (resource policies, resource modifiers) from its cluster,
 * for a Validate step: absent or unreadable is a validation problem at the given field path
 * (Velero: FailedValidation); a cluster that cannot be reached for now is thrown retryable, for
 * the state machine to retry. Never logs the ConfigMap's contents.
 */
import type { ValidationResult } from '../../shared/contracts/kubernetes.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';

/** Reading one object of a cluster. */
export type ClusterReader = Pick<ClusterWriter, 'read'>;

export async function readRequestConfigMap(options: {
  cluster: () => Promise<ClusterReader>;
  namespace: string;
  name: string;
  /** Where problems reading it are reported. */
  path: string;
  /** Where its absence is reported (the reference's name field). */
  namePath: string;
  signal?: AbortSignal;
}): Promise<ValidationResult<Record<string, unknown>>> {
  let configMap: Record<string, unknown> | undefined;
  try {
    configMap = await (await options.cluster()).read({
      resource: 'configmaps',
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: options.namespace, name: options.name },
      },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (error instanceof LifeboatError && error.retryable) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, problems: [{ path: options.path, message: `cannot be read: ${reason}` }] };
  }
  if (!configMap) {
    return {
      ok: false,
      problems: [
        { path: options.namePath, message: `ConfigMap ${options.namespace}/${options.name} not found` },
      ],
    };
  }
  return { ok: true, value: configMap };
}
