import { describe, expect, it } from 'vitest';
import { prepareForRestore } from '../../../../../shared/domain/restore/item.js';

/**
 * Velero's built-in restore item actions, rule by rule (differences 1–3 found by restoring
 * the same backup with a real Velero 1.17 and with Lifeboat).
 */
const options = { backupName: 'nightly', restoreName: 'r1', namespaceMapping: { shop: 'shop-dr' } };

describe('binding subjects under a namespace mapping', () => {
  const subjects = [
    { kind: 'ServiceAccount', name: 'api', namespace: 'shop' },
    { kind: 'ServiceAccount', name: 'metrics', namespace: 'monitoring' },
    { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'ann' },
  ];
  const expected = [
    { kind: 'ServiceAccount', name: 'api', namespace: 'shop-dr' },
    { kind: 'ServiceAccount', name: 'metrics', namespace: 'monitoring' },
    { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'ann' },
  ];

  it.each([
    ['rolebindings.rbac.authorization.k8s.io', { name: 'rb', namespace: 'shop' }],
    ['clusterrolebindings.rbac.authorization.k8s.io', { name: 'crb' }],
  ])('remaps the subjects of %s to the mapped namespaces only', (groupResource, metadata) => {
    const binding = { metadata, roleRef: { kind: 'Role', name: 'reader' }, subjects };
    const restored = prepareForRestore(binding, { ...options, groupResource });
    expect(restored.subjects).toEqual(expected);
    expect(binding.subjects).toEqual(subjects);
  });

  it('leaves subjects alone without a mapping, and never takes inherited keys for one', () => {
    const binding = {
      metadata: { name: 'crb' },
      subjects: [{ kind: 'ServiceAccount', name: 'a', namespace: 'constructor' }],
    };
    const groupResource = 'clusterrolebindings.rbac.authorization.k8s.io';
    const { namespaceMapping: _none, ...unmapped } = options;
    expect(prepareForRestore(binding, { ...unmapped, groupResource }).subjects).toEqual(binding.subjects);
    expect(prepareForRestore(binding, { ...options, groupResource }).subjects).toEqual(binding.subjects);
  });
});

describe('a Service’s node ports', () => {
  const ports = [
    { name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 },
    { name: 'admin', port: 9000, protocol: 'TCP', nodePort: 31999 },
  ];
  const service = (metadata: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
    metadata: { name: 's', namespace: 'shop', ...metadata },
    spec: { type: 'NodePort', clusterIP: '10.0.0.7', ports, ...spec },
  });
  const restoredPorts = (object: Record<string, unknown>) =>
    (prepareForRestore(object, { ...options, groupResource: 'services' }).spec as { ports: unknown }).ports;

  it('keeps the ports the last-applied configuration set, by name', () => {
    const applied = JSON.stringify({ spec: { ports: [{ name: 'http', port: 80, nodePort: 30080 }] } });
    const object = service({ annotations: { 'kubectl.kubernetes.io/last-applied-configuration': applied } });
    expect(restoredPorts(object)).toEqual([ports[0], { name: 'admin', port: 9000, protocol: 'TCP' }]);
  });

  it('keeps an unnamed port the last-applied configuration set, by its number', () => {
    const applied = JSON.stringify({ spec: { ports: [{ port: 80, nodePort: '30080' }] } });
    const object = {
      metadata: { name: 's', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': applied } },
      spec: { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP', nodePort: 30080 }] },
    };
    expect(restoredPorts(object)).toEqual([{ port: 80, protocol: 'TCP', nodePort: 30080 }]);
  });

  it('keeps the ports a manager owns in the managed fields, and drops the assigned ones', () => {
    const managedFields = [
      {
        manager: 'kubectl',
        operation: 'Apply',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': {
            'f:ports': {
              'k:{"port":9000,"protocol":"TCP"}': { '.': {}, 'f:nodePort': {}, 'f:port': {} },
              'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} },
            },
          },
        },
      },
    ];
    const restored = prepareForRestore(service({ managedFields }), { ...options, groupResource: 'services' });
    expect((restored.spec as { ports: unknown }).ports).toEqual([
      { name: 'http', port: 80, protocol: 'TCP' },
      ports[1],
    ]);
    expect((restored.metadata as Record<string, unknown>).managedFields).toBeUndefined();
  });

  it('keeps a LoadBalancer’s health-check node port only where it was set explicitly', () => {
    const spec = { type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 32000 };
    const assigned = prepareForRestore(service({}, spec), { ...options, groupResource: 'services' });
    expect(assigned.spec).not.toHaveProperty('healthCheckNodePort');
    const managedFields = [{ fieldsV1: { 'f:spec': { 'f:healthCheckNodePort': {} } } }];
    const owned = prepareForRestore(service({ managedFields }, spec), {
      ...options,
      groupResource: 'services',
    });
    expect(owned.spec).toHaveProperty('healthCheckNodePort', 32000);
  });

  it('leaves an ExternalName Service’s ports as they are', () => {
    const object = service({}, { type: 'ExternalName', externalName: 'db.example.com' });
    expect(restoredPorts(object)).toEqual(ports);
  });
});

describe('a Job', () => {
  it('keeps a manual selector and manualSelector, dropping only the controller-uid labels', () => {
    const job = {
      metadata: { name: 'j', namespace: 'shop' },
      spec: {
        manualSelector: true,
        selector: { matchLabels: { app: 'migrate', 'controller-uid': 'u' } },
        template: { metadata: { labels: { app: 'migrate', 'batch.kubernetes.io/controller-uid': 'u' } } },
      },
    };
    expect(prepareForRestore(job, { ...options, groupResource: 'jobs.batch' }).spec).toEqual({
      manualSelector: true,
      selector: { matchLabels: { app: 'migrate' } },
      template: { metadata: { labels: { app: 'migrate' } } },
    });
  });
});
