import { describe, expect, it } from 'vitest';
import { prepareItem } from '../../../../../shared/domain/restore/item.js';
import type { ResourceModifiers } from '../../../../../shared/domain/restore/resource-modifiers.js';

const backedUpPod = (annotations: Record<string, string> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'db-0', namespace: 'shop', uid: 'u', labels: { app: 'db' }, annotations },
  spec: {
    nodeName: 'node-1',
    initContainers: [{ name: 'own-init', image: 'busybox' }],
    containers: [{ name: 'db', image: 'postgres' }],
  },
  status: { phase: 'Running' },
});

const options = { groupResource: 'pods', backupName: 'b1', restoreName: 'r1' };

const initNames = (pod: Record<string, unknown>): string[] =>
  ((pod.spec as { initContainers?: { name: string }[] }).initContainers ?? []).map((c) => c.name);

describe('preparing a pod with its restore init hooks, at Velero’s point', () => {
  it('puts the annotation’s init container first, before the pod’s own, and reports it', () => {
    // Act
    const prepared = prepareItem(
      backedUpPod({
        'init.hook.restore.velero.io/container-image': 'busybox:1.36',
        'init.hook.restore.velero.io/container-name': 'restore-seed',
        'init.hook.restore.velero.io/command': '["sh","-c","echo seeded"]',
      }),
      options,
    );

    // Assess
    expect(initNames(prepared.object)).toEqual(['restore-seed', 'own-init']);
    expect(prepared.initContainersAdded).toEqual(['restore-seed']);
    expect((prepared.object.spec as { initContainers: unknown[] }).initContainers[0]).toEqual({
      name: 'restore-seed',
      image: 'busybox:1.36',
      command: ['sh', '-c', 'echo seeded'],
    });
  });

  it('selects spec hooks by the namespace the pod is restored into', () => {
    // Prepare
    const restoreHooks = [
      {
        name: 'for-dr',
        includedNamespaces: ['shop-dr'],
        postHooks: [{ init: { initContainers: [{ name: 'dr-init', image: 'busybox', command: ['true'] }] } }],
      },
      {
        name: 'for-source',
        includedNamespaces: ['shop'],
        postHooks: [
          { init: { initContainers: [{ name: 'src-init', image: 'busybox', command: ['true'] }] } },
        ],
      },
    ];

    // Act
    const prepared = prepareItem(backedUpPod(), {
      ...options,
      namespaceMapping: { shop: 'shop-dr' },
      restoreHooks,
    });

    // Assess
    expect(initNames(prepared.object)).toEqual(['dr-init', 'own-init']);
    expect((prepared.object.metadata as { namespace: string }).namespace).toBe('shop-dr');
  });

  it('adds the hook containers before the resource modifiers run, so a modifier sees them', () => {
    // Prepare
    const resourceModifiers: ResourceModifiers = {
      rules: [
        {
          conditions: { groupResource: 'pods' },
          patch: {
            kind: 'json',
            operations: [
              { op: 'replace', path: '/spec/initContainers/0/image', value: 'mirror/busybox:1.36' },
            ],
          },
        },
      ],
    };

    // Act
    const prepared = prepareItem(
      backedUpPod({ 'init.hook.restore.velero.io/container-image': 'busybox:1.36' }),
      { ...options, resourceModifiers },
    );

    // Assess
    const first = (prepared.object.spec as { initContainers: { name: string; image: string }[] })
      .initContainers[0];
    expect(first?.image).toBe('mirror/busybox:1.36');
    expect(first?.name).toMatch(/^velero-restore-init-[0-9a-f]{8}$/);
    expect(prepared.problems).toEqual([]);
  });

  it('leaves pods without hooks and other kinds as they were', () => {
    // Act
    const pod = prepareItem(backedUpPod(), options);
    const configMap = prepareItem(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'c',
          namespace: 'shop',
          annotations: { 'init.hook.restore.velero.io/container-image': 'busybox' },
        },
      },
      { ...options, groupResource: 'configmaps' },
    );

    // Assess
    expect(initNames(pod.object)).toEqual(['own-init']);
    expect(pod.initContainersAdded).toEqual([]);
    expect(configMap.initContainersAdded).toEqual([]);
    expect(configMap.object).not.toHaveProperty('spec');
  });
});
