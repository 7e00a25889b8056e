/**
 * What a strategic merge patch needs to know of the built-in types: which lists merge by a key
 * (Kubernetes' `patchStrategy:"merge"` / `patchMergeKey` struct tags) and the type of nested
 * fields on the way to them. Lists not named here are replaced whole, as Kubernetes does for a
 * list without a merge strategy. Only the API versions Velero's restore scheme registers
 * (core/v1, apps/v1, batch/v1, snapshot.storage.k8s.io/v1) accept strategic patches: Velero
 * fails a strategic patch on any other kind (`no kind is registered`), custom resources included,
 * as the API server refuses strategic merge patches for custom resources.
 * Pure data; never guesses a merge key for a type it does not list.
 */

/** How one field of a type is patched. */
export interface FieldSchema {
  /** The type of the field (an object), or of its elements (a list of objects). */
  readonly type?: string;
  /** A list of objects merged element by element, matched by this key. */
  readonly mergeKey?: string;
  /** A list of scalars merged as a set (e.g. `metadata.finalizers`). */
  readonly mergeScalars?: boolean;
}

export type TypeSchema = Readonly<Record<string, FieldSchema>>;

const byName = (type?: string): FieldSchema => ({ mergeKey: 'name', ...(type ? { type } : {}) });
const metadata: FieldSchema = { type: 'ObjectMeta' };

/** Types by name, each field tagged as in k8s.io/api (v1.33). */
export const TYPES: Readonly<Record<string, TypeSchema>> = {
  ObjectMeta: { finalizers: { mergeScalars: true }, ownerReferences: { mergeKey: 'uid' } },
  PodTemplateSpec: { metadata, spec: { type: 'PodSpec' } },
  PodSpec: {
    containers: byName('Container'),
    initContainers: byName('Container'),
    ephemeralContainers: byName('Container'),
    volumes: byName(),
    imagePullSecrets: byName(),
    hostAliases: { mergeKey: 'ip' },
    topologySpreadConstraints: { mergeKey: 'topologyKey' },
    resourceClaims: byName(),
    schedulingGates: byName(),
  },
  Container: {
    ports: { mergeKey: 'containerPort' },
    env: byName(),
    volumeMounts: { mergeKey: 'mountPath' },
    volumeDevices: { mergeKey: 'devicePath' },
  },
  WorkloadSpec: { template: { type: 'PodTemplateSpec' } },
  JobTemplateSpec: { metadata, spec: { type: 'WorkloadSpec' } },
  CronJobSpec: { jobTemplate: { type: 'JobTemplateSpec' } },
  ServiceSpec: { ports: { mergeKey: 'port' } },
  // Everything without special lists: only metadata's lists merge.
  Object: { metadata },
  Pod: { metadata, spec: { type: 'PodSpec' } },
  PodTemplate: { metadata, template: { type: 'PodTemplateSpec' } },
  Workload: { metadata, spec: { type: 'WorkloadSpec' } },
  CronJob: { metadata, spec: { type: 'CronJobSpec' } },
  Service: { metadata, spec: { type: 'ServiceSpec' } },
  ServiceAccount: { metadata, secrets: byName() },
};

/** API versions whose kinds take strategic patches, and the root type of the kinds that matter. */
const REGISTERED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  v1: {
    Pod: 'Pod',
    PodTemplate: 'PodTemplate',
    ReplicationController: 'Workload',
    Service: 'Service',
    ServiceAccount: 'ServiceAccount',
  },
  'apps/v1': {
    Deployment: 'Workload',
    ReplicaSet: 'Workload',
    StatefulSet: 'Workload',
    DaemonSet: 'Workload',
  },
  'batch/v1': { Job: 'Workload', CronJob: 'CronJob' },
  'snapshot.storage.k8s.io/v1': {},
};

/**
 * The root type of an object of this apiVersion and kind, or undefined when Velero's restore
 * scheme does not know it (no strategic patch possible).
 */
export function rootTypeOf(apiVersion: string, kind: string): string | undefined {
  const kinds = REGISTERED[apiVersion];
  if (!kinds) return undefined;
  return kinds[kind] ?? 'Object';
}
