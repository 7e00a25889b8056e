import { describe, expect, it } from 'vitest';
import {
  collectionOrder,
  groupResource,
  resolveResourceName,
} from '../../../../../shared/domain/kubernetes/api-resources.js';
import { discovery } from './fixtures.js';

describe('the collection order', () => {
  it('puts the core group first with pods, PVCs and PVs ahead of the rest', () => {
    const order = collectionOrder(discovery).map(groupResource);
    expect(order.slice(0, 3)).toEqual(['pods', 'persistentvolumeclaims', 'persistentvolumes']);
    expect(order.indexOf('secrets')).toBeLessThan(order.indexOf('deployments.apps'));
  });

  it('backs up cohabiting resources once, from the first group met', () => {
    const order = collectionOrder(discovery).map(groupResource);
    expect(order).toContain('events');
    expect(order).not.toContain('events.k8s.io');
  });

  it('leaves out subresources and resources that cannot be listed', () => {
    const order = collectionOrder(discovery).map(groupResource);
    expect(order).not.toContain('pods/log');
    expect(order).not.toContain('selfsubjectaccessreviews.authorization.k8s.io');
  });
});

describe('resolving resource names as users write them', () => {
  it.each([
    ['pods', 'pods'],
    ['pod', 'pods'],
    ['po', 'pods'],
    ['Pod', 'pods'],
    ['deployments.apps', 'deployments.apps'],
    ['deploy', 'deployments.apps'],
    ['crd', 'customresourcedefinitions.apiextensions.k8s.io'],
    ['widgets.example.com', 'widgets.example.com'],
    ['wdg', 'widgets.example.com'],
    ['events', 'events'],
    ['events.events.k8s.io', 'events.events.k8s.io'],
    ['*', '*'],
  ])('%s → %s', (name, expected) => {
    expect(resolveResourceName(name, discovery)).toBe(expected);
  });

  it('resolves nothing for a resource the cluster does not serve', () => {
    expect(resolveResourceName('gadgets', discovery)).toBeUndefined();
  });
});
