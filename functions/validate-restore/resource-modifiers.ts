/**
 * The resource modifiers a restore names, resolved once, at validation (as Velero's restore
 * controller reads them in validateAndComplete): the inline rule set, or the ConfigMap read
 * from the target cluster. A missing or invalid ConfigMap is a validation problem by field path
 * (Velero: FailedValidation); a cluster that cannot be reached for now is retried by the state
 * machine. Reads one ConfigMap, never logs its contents.
 */

import type { ValidationResult } from '../../shared/contracts/kubernetes.js';
import {
  resourceModifiersFromConfigMap,
  toResourceModifiers,
} from '../../shared/contracts/resource-modifiers.js';
import { type RestoreRequest, resourceModifierSource } from '../../shared/contracts/restore-request.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { ResourceModifiers } from '../../shared/domain/restore/resource-modifiers.js';
import { type ClusterReader, readRequestConfigMap } from '../common/read-configmap.js';

export type { ClusterReader };

export async function resolveResourceModifiers(
  request: RestoreRequest,
  deps: { clusterNamed?: (name: string) => Promise<ClusterReader>; signal?: AbortSignal },
): Promise<ValidationResult<ResourceModifiers | undefined>> {
  const source = resourceModifierSource(request);
  if (!source) return { ok: true, value: undefined };
  if (source.kind === 'inline') return { ok: true, value: toResourceModifiers(source.input) };
  if (!deps.clusterNamed)
    throw new LifeboatError(
      'ValidateRestore has no access to the target cluster to read the resource modifier ConfigMap',
    );
  const clusterNamed = deps.clusterNamed;
  const where = `restore.spec.resourceModifier(ConfigMap ${source.namespace}/${source.name})`;
  const read = await readRequestConfigMap({
    cluster: () => clusterNamed(request.cluster),
    namespace: source.namespace,
    name: source.name,
    path: where,
    namePath: 'restore.spec.resourceModifier.name',
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (!read.ok) return read;
  const configMap = read.value;
  return resourceModifiersFromConfigMap(configMap, where);
}
