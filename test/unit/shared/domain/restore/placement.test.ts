import { describe, expect, it } from 'vitest';
import { placedAtPath } from '../../../../../shared/domain/restore/placement.js';

const cm = (metadata: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata,
  data: { a: 'b' },
});

describe('placing a backed-up object where its archive path says', () => {
  it('leaves an object that agrees with its path as it is, without a warning', () => {
    const placed = placedAtPath({
      groupResource: 'configmaps',
      namespace: 'app',
      name: 'x',
      object: cm({ name: 'x', namespace: 'app' }),
    });
    expect(placed).toEqual({ object: cm({ name: 'x', namespace: 'app' }) });
  });

  it('moves an object naming another namespace into its path’s, with a warning', () => {
    // Act
    const placed = placedAtPath({
      groupResource: 'configmaps',
      namespace: 'app',
      name: 'x',
      object: cm({ name: 'x', namespace: 'kube-system', labels: { a: 'b' } }),
    });

    // Assess
    expect(placed.object).toEqual(cm({ name: 'x', namespace: 'app', labels: { a: 'b' } }));
    expect(placed.warning).toBe(
      'its metadata.namespace "kube-system" is not the namespace of its archive path ("app"); restored into the path\'s namespace',
    );
  });

  it('completes an object without a namespace silently, as Velero writes every one with it', () => {
    const placed = placedAtPath({
      groupResource: 'configmaps',
      namespace: 'app',
      name: 'x',
      object: cm({ name: 'x' }),
    });
    expect(placed).toEqual({ object: cm({ name: 'x', namespace: 'app' }) });
  });

  it.each([
    ['a number', 7, 'number'],
    ['null', null, 'null'],
    ['an object', { evil: true }, 'object'],
  ])('moves an object whose namespace is %s, quoting only its kind', (_, namespace, shown) => {
    const placed = placedAtPath({
      groupResource: 'pods',
      namespace: 'app',
      name: 'p',
      object: { metadata: { name: 'p', namespace } },
    });
    expect(placed.object.metadata).toEqual({ name: 'p', namespace: 'app' });
    expect(placed.warning).toContain(`metadata.namespace ${shown} is not`);
  });

  it('drops the namespace of an object read from a cluster-scoped path, with a warning', () => {
    const placed = placedAtPath({
      groupResource: 'configmaps',
      namespace: '',
      name: 'x',
      object: cm({ name: 'x', namespace: 'kube-system' }),
    });
    expect(placed.object).toEqual(cm({ name: 'x' }));
    expect(placed.warning).toMatch(/"kube-system" is ignored: its archive path holds cluster-scoped objects/);
  });

  it('names a Namespace object by its path', () => {
    const placed = placedAtPath({
      groupResource: 'namespaces',
      namespace: '',
      name: 'app',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } },
    });
    expect(placed.object).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } });
    expect(placed.warning).toMatch(
      /metadata.name "kube-system" is not the name of its archive path; named "app"/,
    );
  });

  it('quotes no more than 80 characters of what the object claims', () => {
    const placed = placedAtPath({
      groupResource: 'pods',
      namespace: 'app',
      name: 'p',
      object: { metadata: { namespace: 'n'.repeat(10_000) } },
    });
    expect(placed.warning?.length).toBeLessThan(250);
  });
});
