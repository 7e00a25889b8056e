/**
 * How one backed-up object becomes a restorable one, as Velero's restore and its built-in
 * RestoreItemActions prepare it: server-set metadata and status dropped, and per kind: Services
 * lose cluster IPs (and node ports unless preserved), pods lose node binding and service-account
 * token volumes, PVCs lose binding annotations, jobs lose controller-uid selectors, pods get their
 * restore init hooks; then, in Velero's order (restore.go restoreItem), the resource modifiers,
 * and last the namespace mapped and the backup and restore labels added. Also which objects are
 * never restored (completed pods and jobs, mirror pods) and whether an object's backed-up status
 * is written back (`restoreStatus`). Pure: returns new objects.
 */

import { type RestoreHookSpec, withRestoreInitHooks } from '../hooks/restore.js';
import { type IncludesExcludes, shouldInclude } from '../kubernetes/includes-excludes.js';
import { remapBindingSubjects } from './binding-subjects.js';
import { applyResourceModifiers, type ResourceModifiers } from './resource-modifiers.js';
import { resetAssignedNodePorts, type ServiceOrigin } from './service-ports.js';

type Json = Record<string, unknown>;

const SERVER_SET_METADATA = [
  'generateName',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'ownerReferences',
  'managedFields',
];

const PVC_BINDING_ANNOTATIONS = [
  'pv.kubernetes.io/bind-completed',
  'pv.kubernetes.io/bound-by-controller',
  'volume.beta.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/selected-node',
];

const PV_BINDING_ANNOTATIONS = ['pv.kubernetes.io/bind-completed', 'pv.kubernetes.io/bound-by-controller'];

const JOB_CONTROLLER_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];

export interface RestoreItemOptions {
  readonly groupResource: string;
  readonly backupName: string;
  readonly restoreName: string;
  /** Source namespace → target namespace. */
  readonly namespaceMapping?: Readonly<Record<string, string>>;
  readonly preserveNodePorts?: boolean;
  /**
   * Applied after Velero's own preparation and before the namespace mapping and restore labels,
   * so conditions see the backed-up namespace and labels. Not to namespaces: Velero creates
   * those itself, without modifiers.
   */
  readonly resourceModifiers?: ResourceModifiers;
  /**
   * The restore's hook specs (`spec.hooks.resources`). A pod's init hooks (these, or its
   * `init.hook.restore.velero.io/*` annotations) go in with Velero's other restore item actions
   * (its init-restore-hook action), so before the resource modifiers.
   */
  readonly restoreHooks?: readonly RestoreHookSpec[];
}

const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const clone = <T>(v: T): T => structuredClone(v);

/** Why Velero would not restore this object at all, or undefined. */
export function skipReason(groupResource: string, object: Json): string | undefined {
  const metadata = obj(object.metadata);
  const status = obj(object.status);
  if (groupResource === 'pods') {
    if (status.phase === 'Succeeded' || status.phase === 'Failed')
      return `the pod has completed (${String(status.phase)})`;
    if (obj(metadata.annotations)['kubernetes.io/config.mirror'] !== undefined)
      return 'a mirror pod is managed by its kubelet';
  }
  if (groupResource === 'jobs.batch' && status.completionTime) return 'the job has completed';
  return undefined;
}

/**
 * Velero's restore log line for an object it does not restore (restore.go restoreItem):
 * completed pods and jobs, and mirror pods. Undefined for anything restored.
 */
export function skipNotice(groupResource: string, object: Json): string | undefined {
  const reason = skipReason(groupResource, object);
  if (reason === undefined) return undefined;
  if (reason === 'a mirror pod is managed by its kubelet')
    return "Not restoring pod because it's a mirror pod";
  const metadata = obj(object.metadata);
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  return `${namespace ? `${namespace}/` : ''}${String(metadata.name ?? '')} is complete - skipping`;
}

export function mappedNamespace(
  namespace: string,
  mapping: Readonly<Record<string, string>> | undefined,
): string {
  return mapping?.[namespace] ?? namespace;
}

/**
 * The object as restored, the resource modifier rules that failed on it (Velero: errors, the
 * item is still restored) and, for a pod, the init containers its restore hooks added.
 */
export function prepareItem(
  object: Json,
  options: RestoreItemOptions,
): { object: Json; problems: string[]; initContainersAdded: string[] } {
  const prepared = preparedContent(object, options);
  const hooked = options.groupResource === 'pods' ? withInitHooks(prepared, options) : undefined;
  const content = hooked?.ok ? hooked.pod : prepared;
  const modified =
    options.resourceModifiers && options.groupResource !== 'namespaces'
      ? applyResourceModifiers({
          modifiers: options.resourceModifiers,
          object: content,
          groupResource: options.groupResource,
        })
      : { object: content, problems: [] };
  return {
    object: placed(modified.object, options),
    problems: hooked && !hooked.ok ? [hooked.error, ...modified.problems] : modified.problems,
    initContainersAdded: hooked?.ok ? [...hooked.added] : [],
  };
}

function withInitHooks(pod: Json, options: RestoreItemOptions): ReturnType<typeof withRestoreInitHooks> {
  const namespace = obj(pod.metadata).namespace;
  return withRestoreInitHooks({
    pod,
    specs: options.restoreHooks ?? [],
    restoreName: options.restoreName,
    ...(typeof namespace === 'string' && namespace
      ? { namespace: mappedNamespace(namespace, options.namespaceMapping) }
      : {}),
  });
}

export function prepareForRestore(object: Json, options: RestoreItemOptions): Json {
  return prepareItem(object, options).object;
}

/** Velero's annotation that overrides `restoreStatus` for one object. */
export const RESTORE_STATUS_ANNOTATION = 'velero.io/restore-status';

/**
 * Whether the backed-up status of this object is written back after it is created (Velero 1.16
 * determineRestoreStatus): `restoreStatus` includes/excludes by resource (absent: no resource),
 * overridden by the object's `velero.io/restore-status: "true"|"false"` annotation (trimmed, any
 * case; another value leaves the spec's answer).
 */
export function shouldRestoreStatus(options: {
  groupResource: string;
  /** The prepared object (its annotations after resource modifiers). */
  object: Json;
  restoreStatus?: IncludesExcludes;
}): boolean {
  const bySpec = options.restoreStatus ? shouldInclude(options.restoreStatus, options.groupResource) : false;
  const annotation = obj(obj(options.object.metadata).annotations)[RESTORE_STATUS_ANNOTATION];
  const value = typeof annotation === 'string' ? annotation.trim().toLowerCase() : undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return bySpec;
}

/** The namespace mapped and the restore labels added: the last of Velero's preparation. */
function placed(object: Json, options: RestoreItemOptions): Json {
  const out = clone(object);
  const metadata = obj(out.metadata);
  if (typeof metadata.namespace === 'string' && metadata.namespace) {
    metadata.namespace = mappedNamespace(metadata.namespace, options.namespaceMapping);
  }
  if (options.groupResource === 'namespaces' && typeof metadata.name === 'string') {
    metadata.name = mappedNamespace(metadata.name, options.namespaceMapping);
  }
  metadata.labels = {
    ...obj(metadata.labels),
    'velero.io/backup-name': options.backupName,
    'velero.io/restore-name': options.restoreName,
  };
  out.metadata = metadata;
  return out;
}

/** Server-set fields and status dropped, and what Velero's built-in restore item actions change. */
function preparedContent(object: Json, options: RestoreItemOptions): Json {
  const out = clone(object);
  const metadata = obj(out.metadata);
  // The Service action reads which node ports were set explicitly from the managed fields.
  const managedFields = metadata.managedFields;
  for (const key of SERVER_SET_METADATA) delete metadata[key];
  delete out.status;
  out.metadata = metadata;
  const spec = obj(out.spec);
  // Each step below changes the clone's own spec and metadata in place.
  switch (options.groupResource) {
    case 'services':
      resetServiceAddresses(spec, options, { annotations: obj(metadata.annotations), managedFields });
      break;
    case 'rolebindings.rbac.authorization.k8s.io':
    case 'clusterrolebindings.rbac.authorization.k8s.io':
      remapBindingSubjects(out, options.namespaceMapping);
      break;
    case 'pods':
      resetPodBinding(spec);
      break;
    case 'persistentvolumeclaims': {
      const annotations = obj(metadata.annotations);
      for (const key of PVC_BINDING_ANNOTATIONS) delete annotations[key];
      metadata.annotations = annotations;
      break;
    }
    case 'persistentvolumes':
      resetVolumeBinding({ spec, metadata, options });
      break;
    case 'jobs.batch':
      resetJobSelector(spec);
      break;
  }
  if (out.spec !== undefined) out.spec = spec;
  return out;
}

/**
 * The cluster IPs are the new cluster's to assign, and so are the node ports the old cluster
 * assigned, unless the restore preserves them (Velero's Service action).
 */
function resetServiceAddresses(spec: Json, options: RestoreItemOptions, origin: ServiceOrigin): void {
  if (spec.clusterIP !== 'None') {
    delete spec.clusterIP;
    delete spec.clusterIPs;
  }
  if (!options.preserveNodePorts) resetAssignedNodePorts(spec, origin);
}

/** The pod is scheduled afresh, and gets a new service-account token volume. */
function resetPodBinding(spec: Json): void {
  delete spec.nodeName;
  delete spec.priority;
  // The kubelet's projected service-account token volume is re-created by admission.
  const isToken = (name: unknown) => typeof name === 'string' && name.startsWith('kube-api-access-');
  if (Array.isArray(spec.volumes)) spec.volumes = spec.volumes.filter((v) => !isToken(obj(v).name));
  for (const key of ['containers', 'initContainers']) {
    if (!Array.isArray(spec[key])) continue;
    spec[key] = (spec[key] as unknown[]).map((c) => {
      const container = obj(c);
      if (Array.isArray(container.volumeMounts)) {
        container.volumeMounts = container.volumeMounts.filter((m) => !isToken(obj(m).name));
      }
      return container;
    });
  }
}

/**
 * Velero resetVolumeBindingInfo: the restored PV looks statically provisioned and manually
 * bound, so the PV controller binds it to the restored PVC again.
 */
function resetVolumeBinding(pv: { spec: Json; metadata: Json; options: RestoreItemOptions }): void {
  const { spec, metadata } = pv;
  const annotations = obj(metadata.annotations);
  for (const key of PV_BINDING_ANNOTATIONS) delete annotations[key];
  if (metadata.annotations !== undefined) metadata.annotations = annotations;
  const claimRef = obj(spec.claimRef);
  if (Object.keys(claimRef).length > 0) {
    delete claimRef.uid;
    delete claimRef.resourceVersion;
    if (typeof claimRef.namespace === 'string') {
      claimRef.namespace = mappedNamespace(claimRef.namespace, pv.options.namespaceMapping);
    }
    spec.claimRef = claimRef;
  }
}

/**
 * The job controller labels its pods with the old job's uid; the new job gets its own (Velero's
 * Job action). The rest of the selector and `manualSelector` stay: a manual selector must reach
 * the cluster as it was, and an emptied one is filled in again by the apiserver.
 */
function resetJobSelector(spec: Json): void {
  if (spec.selector && typeof spec.selector === 'object') {
    const selector = obj(spec.selector);
    const matchLabels = obj(selector.matchLabels);
    for (const key of JOB_CONTROLLER_LABELS) delete matchLabels[key];
    // Velero's Job round trip drops an empty matchLabels (omitempty).
    if (Object.keys(matchLabels).length === 0) delete selector.matchLabels;
  }
  const templateMeta = obj(obj(spec.template).metadata);
  const labels = obj(templateMeta.labels);
  for (const key of JOB_CONTROLLER_LABELS) delete labels[key];
}
