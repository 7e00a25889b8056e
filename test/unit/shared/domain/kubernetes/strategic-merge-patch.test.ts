import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../../../shared/domain/kubernetes/merge-patch.js';
import { applyStrategicMergePatch } from '../../../../../shared/domain/kubernetes/strategic-merge-patch.js';

const deployment = (): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' }, finalizers: ['a'] },
  spec: {
    replicas: 2,
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'web:1',
            args: ['--a', '--b'],
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            ports: [{ containerPort: 80, name: 'http' }],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
          { name: 'sidecar', image: 'side:1' },
        ],
        volumes: [{ name: 'data', emptyDir: {} }],
        tolerations: [{ key: 'a', operator: 'Exists' }],
        imagePullSecrets: [{ name: 'reg' }],
      },
    },
  },
});

const podSpec = (o: JsonObject) =>
  ((o.spec as JsonObject).template as JsonObject).spec as {
    containers: JsonObject[];
    volumes: JsonObject[];
    tolerations: JsonObject[];
    imagePullSecrets: JsonObject[];
  };

const patchContainers = (containers: unknown[], extra: JsonObject = {}): JsonObject => ({
  spec: { template: { spec: { containers, ...extra } } },
});

describe('strategic merge patch of built-in objects', () => {
  it('merges containers by name: one image changes, the other container stays', () => {
    const out = applyStrategicMergePatch(deployment(), patchContainers([{ name: 'web', image: 'web:2' }]));
    expect(podSpec(out).containers.map((c) => [c.name, c.image])).toEqual([
      ['web', 'web:2'],
      ['sidecar', 'side:1'],
    ]);
    expect(podSpec(out).containers[0]?.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
  });

  it.each([
    {
      case: 'env by name',
      patch: {
        name: 'web',
        env: [
          { name: 'B', value: 'two' },
          { name: 'C', value: '3' },
        ],
      },
      field: 'env',
      expected: [
        { name: 'A', value: '1' },
        { name: 'B', value: 'two' },
        { name: 'C', value: '3' },
      ],
    },
    {
      case: 'ports by containerPort',
      patch: { name: 'web', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }] },
      field: 'ports',
      expected: [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }],
    },
    {
      case: 'volumeMounts by mountPath',
      patch: { name: 'web', volumeMounts: [{ mountPath: '/data', readOnly: true }] },
      field: 'volumeMounts',
      expected: [{ name: 'data', mountPath: '/data', readOnly: true }],
    },
    {
      case: 'args (no merge key): replaced',
      patch: { name: 'web', args: ['--c'] },
      field: 'args',
      expected: ['--c'],
    },
  ])('merges a container’s $case', ({ patch, field, expected }) => {
    const out = applyStrategicMergePatch(deployment(), patchContainers([patch]));
    expect(podSpec(out).containers[0]?.[field]).toEqual(expected);
  });

  it('merges volumes and imagePullSecrets by name, replaces tolerations (no merge key)', () => {
    const out = applyStrategicMergePatch(
      deployment(),
      patchContainers([], {
        volumes: [{ name: 'cache', emptyDir: {} }],
        imagePullSecrets: [{ name: 'other' }],
        tolerations: [{ key: 'b', operator: 'Exists' }],
      }),
    );
    expect(podSpec(out).volumes.map((v) => v.name)).toEqual(['data', 'cache']);
    expect(podSpec(out).imagePullSecrets).toEqual([{ name: 'reg' }, { name: 'other' }]);
    expect(podSpec(out).tolerations).toEqual([{ key: 'b', operator: 'Exists' }]);
  });

  it('merges metadata.finalizers as a set and deletes from it with $deleteFromPrimitiveList', () => {
    const out = applyStrategicMergePatch(deployment(), {
      metadata: { finalizers: ['a', 'b'], '$deleteFromPrimitiveList/finalizers': ['a'] },
    });
    expect((out.metadata as JsonObject).finalizers).toEqual(['b']);
  });

  it('merges service ports by port', () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] },
    };
    const out = applyStrategicMergePatch(service, { spec: { ports: [{ port: 80, targetPort: 9090 }] } });
    expect((out.spec as JsonObject).ports).toEqual([{ port: 80, targetPort: 9090 }, { port: 443 }]);
  });

  it('merges a service account’s secrets by name and replaces its imagePullSecrets (no merge key)', () => {
    const sa = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default' },
      secrets: [{ name: 'a' }],
      imagePullSecrets: [{ name: 'x' }],
    };
    const out = applyStrategicMergePatch(sa, { secrets: [{ name: 'b' }], imagePullSecrets: [{ name: 'y' }] });
    expect(out.secrets).toEqual([{ name: 'a' }, { name: 'b' }]);
    expect(out.imagePullSecrets).toEqual([{ name: 'y' }]);
  });

  it('reaches pod templates of jobs and cron jobs', () => {
    const cron = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c' },
      spec: {
        jobTemplate: {
          spec: {
            template: {
              spec: {
                containers: [
                  { name: 'a', image: 'a:1' },
                  { name: 'b', image: 'b:1' },
                ],
              },
            },
          },
        },
      },
    };
    const out = applyStrategicMergePatch(cron, {
      spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'b', image: 'b:2' }] } } } } },
    });
    expect(out).toMatchObject({
      spec: {
        jobTemplate: {
          spec: {
            template: {
              spec: {
                containers: [
                  { name: 'a', image: 'a:1' },
                  { name: 'b', image: 'b:2' },
                ],
              },
            },
          },
        },
      },
    });
  });

  it('deletes a key with null and merges maps', () => {
    const out = applyStrategicMergePatch(deployment(), {
      metadata: { labels: { app: null, tier: 'front' } },
      spec: { replicas: 5 },
    });
    expect((out.metadata as JsonObject).labels).toEqual({ tier: 'front' });
    expect((out.spec as JsonObject).replicas).toBe(5);
  });

  describe('directives', () => {
    it('$patch: delete removes a list element by its merge key', () => {
      const out = applyStrategicMergePatch(
        deployment(),
        patchContainers([{ name: 'sidecar', $patch: 'delete' }]),
      );
      expect(podSpec(out).containers.map((c) => c.name)).toEqual(['web']);
    });

    it('{$patch: replace} in a list replaces the whole list', () => {
      const out = applyStrategicMergePatch(
        deployment(),
        patchContainers([{ $patch: 'replace' }, { name: 'only', image: 'o:1' }]),
      );
      expect(podSpec(out).containers).toEqual([{ name: 'only', image: 'o:1' }]);
    });

    it('$patch: replace on a map replaces the map', () => {
      const out = applyStrategicMergePatch(deployment(), {
        metadata: { labels: { $patch: 'replace', only: 'this' } },
      });
      expect((out.metadata as JsonObject).labels).toEqual({ only: 'this' });
    });

    it('$patch: delete on a map removes it', () => {
      const out = applyStrategicMergePatch(deployment(), { metadata: { labels: { $patch: 'delete' } } });
      expect((out.metadata as JsonObject).labels).toBeUndefined();
    });

    it('$patch: merge is the default', () => {
      const out = applyStrategicMergePatch(
        deployment(),
        patchContainers([{ name: 'web', $patch: 'merge', image: 'w:3' }]),
      );
      expect(podSpec(out).containers[0]).toMatchObject({ name: 'web', image: 'w:3', args: ['--a', '--b'] });
    });

    it('$retainKeys keeps only the keys it names', () => {
      const out = applyStrategicMergePatch(deployment(), {
        spec: {
          template: {
            spec: {
              volumes: [{ name: 'data', hostPath: { path: '/x' }, $retainKeys: ['name', 'hostPath'] }],
            },
          },
        },
      });
      expect(podSpec(out).volumes).toEqual([{ name: 'data', hostPath: { path: '/x' } }]);
    });

    it('$setElementOrder is accepted and leaves the merge as it is', () => {
      const out = applyStrategicMergePatch(
        deployment(),
        patchContainers([{ name: 'web', image: 'web:9' }], {
          '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'web' }],
        }),
      );
      expect(podSpec(out).containers.map((c) => c.name)).toEqual(['web', 'sidecar']);
      expect(JSON.stringify(out)).not.toContain('$setElementOrder');
    });
  });

  describe('errors', () => {
    it.each([
      {
        case: 'a custom resource (Velero’s scheme does not register it)',
        object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
        patch: { spec: { size: 2 } },
        message: /no kind "Widget" is registered for version "example.com\/v1"/,
      },
      {
        case: 'a built-in kind outside core, apps and batch',
        object: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'i' } },
        patch: { spec: {} },
        message: /no kind "Ingress" is registered/,
      },
      {
        case: 'a merged element without its merge key',
        object: deployment(),
        patch: patchContainers([{ image: 'x' }]),
        message: /does not contain the merge key "name"/,
      },
      {
        case: 'an unknown directive',
        object: deployment(),
        patch: { metadata: { $patch: 'explode' } },
        message: /unknown \$patch directive "explode"/,
      },
      {
        case: 'deleting the whole object',
        object: deployment(),
        patch: { $patch: 'delete' },
        message: /cannot delete the whole object/,
      },
    ])('refuses $case', ({ object, patch, message }) => {
      expect(() => applyStrategicMergePatch(object, patch)).toThrow(message);
    });
  });

  it('patches any other core/v1 kind with maps merged and lists replaced', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1', b: '2' } };
    expect(applyStrategicMergePatch(cm, { data: { b: null, c: '3' } })).toEqual({
      ...cm,
      data: { a: '1', c: '3' },
    });
  });

  it('never changes its inputs', () => {
    const object = deployment();
    const before = structuredClone(object);
    applyStrategicMergePatch(object, patchContainers([{ name: 'web', image: 'web:2' }]));
    expect(object).toEqual(before);
  });
});
