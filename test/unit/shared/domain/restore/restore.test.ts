import { describe, expect, it } from 'vitest';
import { prepareForRestore, skipReason } from '../../../../../shared/domain/restore/item.js';
import { restorable, restorePhases } from '../../../../../shared/domain/restore/order.js';
import { hostileName, parseEntryName } from '../../../../../shared/domain/storage/archive-entry.js';

describe('the restore order', () => {
  it('puts CRDs first, then Velero priorities, the rest alphabetically, and the low priorities last', () => {
    expect(
      restorePhases([
        'widgets.example.com',
        'deployments.apps',
        'services',
        'clusters.cluster.x-k8s.io',
        'pods',
        'namespaces',
        'customresourcedefinitions.apiextensions.k8s.io',
        'configmaps',
        'apps.kappctrl.k14s.io',
        'cronjobs.batch',
      ]),
    ).toEqual([
      'customresourcedefinitions.apiextensions.k8s.io',
      'namespaces',
      'configmaps',
      'pods',
      'services',
      'cronjobs.batch',
      'deployments.apps',
      'widgets.example.com',
      'clusters.cluster.x-k8s.io',
      'apps.kappctrl.k14s.io',
    ]);
  });

  it('never restores nodes, events and Velero’s own objects', () => {
    expect(
      restorePhases(['nodes', 'events', 'events.events.k8s.io', 'backups.velero.io', 'secrets']),
    ).toEqual(['secrets']);
    expect(restorable('volumeattachments.storage.k8s.io')).toBe(false);
  });
});

describe('tarball entry names', () => {
  it.each([
    ['metadata/version', { kind: 'version' }],
    [
      'resources/pods/namespaces/shop/web-1.json',
      { kind: 'item', groupResource: 'pods', namespace: 'shop', name: 'web-1' },
    ],
    [
      'resources/namespaces/cluster/shop.json',
      { kind: 'item', groupResource: 'namespaces', namespace: '', name: 'shop' },
    ],
    [
      'resources/deployments.apps/v1-preferredversion/namespaces/shop/web.json',
      {
        kind: 'item',
        groupResource: 'deployments.apps',
        version: { name: 'v1', preferred: true },
        namespace: 'shop',
        name: 'web',
      },
    ],
    [
      'resources/widgets.example.com/v2beta1/cluster/w.json',
      {
        kind: 'item',
        groupResource: 'widgets.example.com',
        version: { name: 'v2beta1', preferred: false },
        namespace: '',
        name: 'w',
      },
    ],
    [
      'resources/rolebindings.rbac.authorization.k8s.io/namespaces/kube-system/system::leader.json',
      {
        kind: 'item',
        groupResource: 'rolebindings.rbac.authorization.k8s.io',
        namespace: 'kube-system',
        name: 'system::leader',
      },
    ],
    [
      './resources/pods/namespaces/a/b.json',
      { kind: 'item', groupResource: 'pods', namespace: 'a', name: 'b' },
    ],
    ['resources/pods/namespaces/a/b.yaml', { kind: 'other' }],
    ['README', { kind: 'other' }],
  ])('%s', (name, expected) => {
    expect(parseEntryName(name)).toEqual(expected);
  });

  it.each([
    ['/etc/passwd', 'an absolute path'],
    ['resources/../../etc/passwd', 'a path that climbs out with ".."'],
    ['resources\\pods\\x.json', 'a backslash in the path'],
    ['C:/x', 'an absolute path'],
  ])('refuses %s as %s', (name, reason) => {
    expect(hostileName(name)).toBe(reason);
  });

  it('accepts ordinary names', () => {
    expect(hostileName('resources/pods/namespaces/a/b.json')).toBeUndefined();
  });
});

describe('preparing an object for restore', () => {
  const options = { backupName: 'nightly', restoreName: 'r1', namespaceMapping: { shop: 'shop-dr' } };

  it('drops server-set metadata and status, maps the namespace and adds the Velero labels', () => {
    const restored = prepareForRestore(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'c',
          namespace: 'shop',
          uid: 'u',
          resourceVersion: '9',
          creationTimestamp: 't',
          managedFields: [],
          labels: { app: 'web' },
        },
        data: { a: '1' },
        status: { x: 1 },
      },
      { ...options, groupResource: 'configmaps' },
    );
    expect(restored).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'c',
        namespace: 'shop-dr',
        labels: { app: 'web', 'velero.io/backup-name': 'nightly', 'velero.io/restore-name': 'r1' },
      },
      data: { a: '1' },
    });
  });

  it('resets a Service’s cluster IPs and node ports unless they are preserved', () => {
    const service = {
      metadata: { name: 's', namespace: 'shop' },
      spec: {
        clusterIP: '10.0.0.7',
        clusterIPs: ['10.0.0.7'],
        type: 'NodePort',
        ports: [{ port: 80, nodePort: 30080 }],
      },
    };
    expect(prepareForRestore(service, { ...options, groupResource: 'services' }).spec).toEqual({
      type: 'NodePort',
      ports: [{ port: 80 }],
    });
    expect(
      prepareForRestore(service, { ...options, groupResource: 'services', preserveNodePorts: true }).spec,
    ).toMatchObject({
      ports: [{ port: 80, nodePort: 30080 }],
    });
    const headless = { metadata: { name: 'h' }, spec: { clusterIP: 'None' } };
    expect(prepareForRestore(headless, { ...options, groupResource: 'services' }).spec).toEqual({
      clusterIP: 'None',
    });
  });

  it('unbinds pods from their node and drops the service-account token volume', () => {
    const pod = {
      metadata: { name: 'p', namespace: 'shop' },
      spec: {
        nodeName: 'n1',
        priority: 0,
        volumes: [{ name: 'kube-api-access-x1' }, { name: 'data' }],
        containers: [{ name: 'c', volumeMounts: [{ name: 'kube-api-access-x1' }, { name: 'data' }] }],
      },
    };
    expect(prepareForRestore(pod, { ...options, groupResource: 'pods' }).spec).toEqual({
      volumes: [{ name: 'data' }],
      containers: [{ name: 'c', volumeMounts: [{ name: 'data' }] }],
    });
  });

  it('removes PVC binding annotations and remaps a PV’s claim', () => {
    const pvc = {
      metadata: {
        name: 'c',
        namespace: 'shop',
        annotations: { 'pv.kubernetes.io/bind-completed': 'yes', keep: 'me' },
      },
    };
    expect(
      prepareForRestore(pvc, { ...options, groupResource: 'persistentvolumeclaims' }).metadata,
    ).toMatchObject({ annotations: { keep: 'me' } });
    const pv = {
      metadata: { name: 'pv' },
      spec: { claimRef: { namespace: 'shop', name: 'c', uid: 'u', resourceVersion: '1' } },
    };
    expect(prepareForRestore(pv, { ...options, groupResource: 'persistentvolumes' }).spec).toEqual({
      claimRef: { namespace: 'shop-dr', name: 'c' },
    });
  });

  it('drops a job’s controller-uid selector', () => {
    const job = {
      metadata: { name: 'j' },
      spec: {
        selector: { matchLabels: { 'controller-uid': 'u' } },
        template: { metadata: { labels: { 'controller-uid': 'u', app: 'x' } } },
      },
    };
    // Velero's Job action leaves the emptied selector; the apiserver generates the new one.
    expect(prepareForRestore(job, { ...options, groupResource: 'jobs.batch' }).spec).toEqual({
      selector: {},
      template: { metadata: { labels: { app: 'x' } } },
    });
  });

  it('never changes the backed-up object', () => {
    const original = { metadata: { name: 'c', uid: 'u' }, status: {} };
    prepareForRestore(original, { ...options, groupResource: 'configmaps' });
    expect(original).toEqual({ metadata: { name: 'c', uid: 'u' }, status: {} });
  });

  it.each([
    ['pods', { status: { phase: 'Succeeded' } }, 'the pod has completed (Succeeded)'],
    [
      'pods',
      { metadata: { annotations: { 'kubernetes.io/config.mirror': 'x' } } },
      'a mirror pod is managed by its kubelet',
    ],
    ['jobs.batch', { status: { completionTime: 't' } }, 'the job has completed'],
    ['pods', { status: { phase: 'Running' } }, undefined],
  ])('skips %s %j: %s', (gr, object, reason) => {
    expect(skipReason(gr, object)).toBe(reason);
  });
});
