import { describe, expect, it } from 'vitest';
import { expectedItems, itemLabel } from '../../../../../shared/domain/drills/expected-items.js';

const resourceList = {
  'apiextensions.k8s.io/v1/CustomResourceDefinition': ['widgets.example.io'],
  'apps/v1/Deployment': ['shop/web'],
  'apps/v1/ReplicaSet': ['shop/web-5bc87'],
  'apps/v1/StatefulSet': ['db/pg'],
  'example.io/v1/Widget': ['shop/small'],
  'snapshot.storage.k8s.io/v1/VolumeSnapshot': ['db/snap'],
  'storage.k8s.io/v1/CSINode': ['node-1'],
  'v1/ConfigMap': ['shop/kube-root-ca.crt', 'shop/web-config'],
  'v1/Namespace': ['db', 'shop'],
  'v1/PersistentVolume': ['pvc-0f1e2d3c'],
  'v1/PersistentVolumeClaim': ['db/data'],
  'v1/Pod': ['shop/web-5bc87-abcde'],
  'v1/Secret': ['shop/web-secret'],
  'v1/Service': ['shop/web'],
  'velero.io/v1/BackupRepository': ['velero/default'],
};

describe('the items a drill expects', () => {
  const items = expectedItems({ resourceList, namespaceMapping: { shop: 'shop-dr' } });
  const find = (label: string) => items.find((i) => itemLabel(i) === label);

  it('lists every item of the resource list once', () => {
    expect(items).toHaveLength(Object.values(resourceList).flat().length);
  });

  it.each([
    ['v1/Secret shop-dr/web-secret', 'data', undefined],
    ['v1/ConfigMap shop-dr/web-config', 'data', undefined],
    ['example.io/v1/Widget shop-dr/small', 'data', undefined],
    ['snapshot.storage.k8s.io/v1/VolumeSnapshot db/snap', 'presence', undefined],
    ['v1/Service shop-dr/web', 'presence', undefined],
    ['apps/v1/Deployment shop-dr/web', 'presence', 'available'],
    ['apps/v1/StatefulSet db/pg', 'presence', 'available'],
    ['v1/PersistentVolumeClaim db/data', 'presence', 'bound'],
    ['v1/Namespace shop-dr', 'presence', undefined],
    ['v1/Namespace db', 'presence', undefined],
    ['apiextensions.k8s.io/v1/CustomResourceDefinition widgets.example.io', 'presence', undefined],
    ['v1/Pod shop-dr/web-5bc87-abcde', 'none', undefined],
    ['apps/v1/ReplicaSet shop-dr/web-5bc87', 'none', undefined],
    ['v1/ConfigMap shop-dr/kube-root-ca.crt', 'none', undefined],
    ['storage.k8s.io/v1/CSINode node-1', 'none', undefined],
    ['velero.io/v1/BackupRepository velero/default', 'none', undefined],
    // Re-provisioned from a CSI snapshot (a new name) or renamed velero-clone-…: its claim is waited on.
    ['v1/PersistentVolume pvc-0f1e2d3c', 'none', undefined],
  ])('checks %s by %s', (label, check, readiness) => {
    const item = find(label);
    expect(item?.check).toBe(check);
    expect(item?.readiness).toBe(readiness);
    if (check === 'none') expect(item?.reason).toEqual(expect.any(String));
  });

  it('keeps the source namespace beside the mapped one', () => {
    expect(find('v1/Secret shop-dr/web-secret')).toMatchObject({
      sourceNamespace: 'shop',
      namespace: 'shop-dr',
    });
  });

  it('expects nothing of an empty resource list', () => {
    expect(expectedItems({ resourceList: {} })).toEqual([]);
  });
});
