import type { ApiResource } from '../../../../../shared/domain/kubernetes/api-resources.js';

const r = (
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  shortNames: string[] = [],
): ApiResource => ({
  group,
  version,
  resource,
  kind,
  namespaced,
  shortNames,
  singular: kind.toLowerCase(),
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
});

/** A discovery document in the order a 1.34 apiserver serves it (abridged). */
export const discovery: readonly ApiResource[] = [
  r('', 'v1', 'configmaps', 'ConfigMap', true, ['cm']),
  r('', 'v1', 'events', 'Event', true, ['ev']),
  r('', 'v1', 'namespaces', 'Namespace', false, ['ns']),
  r('', 'v1', 'persistentvolumes', 'PersistentVolume', false, ['pv']),
  r('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, ['pvc']),
  r('', 'v1', 'pods', 'Pod', true, ['po']),
  r('', 'v1', 'secrets', 'Secret', true),
  r('', 'v1', 'serviceaccounts', 'ServiceAccount', true, ['sa']),
  r('', 'v1', 'services', 'Service', true, ['svc']),
  { ...r('', 'v1', 'pods/log', 'Pod', true), verbs: ['get'] },
  r('apps', 'v1', 'deployments', 'Deployment', true, ['deploy']),
  r('apps', 'v1', 'replicasets', 'ReplicaSet', true, ['rs']),
  r('events.k8s.io', 'v1', 'events', 'Event', true, ['ev']),
  r('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  r('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  r('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, [
    'crd',
    'crds',
  ]),
  r('example.com', 'v1', 'widgets', 'Widget', true, ['wdg']),
  {
    ...r('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false),
    verbs: ['create'],
  },
];
