import { describe, expect, it } from 'vitest';
import {
  collectsResource,
  excludesRelated,
  type ResourceFilter,
} from '../../../../shared/domain/resource-filter.js';

const all = { includes: [], excludes: [] };
const onlyApp = { includes: ['app'], excludes: [] };
const pods = { groupResource: 'pods', namespaced: true };
const pvs = { groupResource: 'persistentvolumes', namespaced: false };
const old = (o: Partial<Extract<ResourceFilter, { style: 'old' }>> = {}): ResourceFilter => ({
  style: 'old',
  resources: all,
  ...o,
});
const scoped = (o: Partial<Extract<ResourceFilter, { style: 'scoped' }>> = {}): ResourceFilter => ({
  style: 'scoped',
  clusterScoped: { includes: [], excludes: [] },
  namespaceScoped: { includes: ['*'], excludes: [] },
  ...o,
});

describe('which resources a backup collects', () => {
  it.each([
    {
      name: 'old, all namespaces: cluster resources auto-included',
      filter: old(),
      ns: all,
      resource: pvs,
      expected: true,
    },
    {
      name: 'old, some namespaces: cluster resources auto-excluded',
      filter: old(),
      ns: onlyApp,
      resource: pvs,
      expected: false,
    },
    {
      name: 'old, includeClusterResources true',
      filter: old({ includeClusterResources: true }),
      ns: onlyApp,
      resource: pvs,
      expected: true,
    },
    {
      name: 'old, includeClusterResources false',
      filter: old({ includeClusterResources: false }),
      ns: all,
      resource: pvs,
      expected: false,
    },
    {
      name: 'old, included list without pods',
      filter: old({ resources: { includes: ['secrets'], excludes: [] } }),
      ns: all,
      resource: pods,
      expected: false,
    },
    {
      name: 'old, excluded pods',
      filter: old({ resources: { includes: ['*'], excludes: ['pods'] } }),
      ns: all,
      resource: pods,
      expected: false,
    },
    {
      name: 'scoped, no cluster lists, full backup: all cluster-scoped',
      filter: scoped(),
      ns: all,
      resource: pvs,
      expected: true,
    },
    {
      name: 'scoped, no cluster lists, some namespaces: none',
      filter: scoped(),
      ns: onlyApp,
      resource: pvs,
      expected: false,
    },
    {
      name: 'scoped, namespaces always with no cluster lists',
      filter: scoped(),
      ns: onlyApp,
      resource: { groupResource: 'namespaces', namespaced: false },
      expected: true,
    },
    {
      name: 'scoped, cluster include *',
      filter: scoped({ clusterScoped: { includes: ['*'], excludes: [] } }),
      ns: onlyApp,
      resource: pvs,
      expected: true,
    },
    { name: 'scoped, namespaced default *', filter: scoped(), ns: onlyApp, resource: pods, expected: true },
    {
      name: 'scoped, namespaced exclude',
      filter: scoped({ namespaceScoped: { includes: ['*'], excludes: ['pods'] } }),
      ns: all,
      resource: pods,
      expected: false,
    },
  ])('$name', ({ filter, ns, resource, expected }) => {
    expect(collectsResource({ filter, namespaces: ns, resource })).toBe(expected);
  });

  it.each([
    { name: 'old auto: a related PV is pulled in', filter: old(), resource: pvs, excluded: false },
    {
      name: 'old auto with an include list not naming PVs: kept out',
      filter: old({ resources: { includes: ['pods'], excludes: [] } }),
      resource: pvs,
      excluded: true,
    },
    {
      name: 'old false: a related PV stays out',
      filter: old({ includeClusterResources: false }),
      resource: pvs,
      excluded: true,
    },
    {
      name: 'old: an explicitly excluded resource stays out',
      filter: old({ resources: { includes: [], excludes: ['persistentvolumes'] } }),
      resource: pvs,
      excluded: true,
    },
    {
      name: 'scoped: empty cluster include still pulls related',
      filter: scoped(),
      resource: pvs,
      excluded: false,
    },
    {
      name: 'scoped: excluded cluster resource stays out',
      filter: scoped({ clusterScoped: { includes: [], excludes: ['persistentvolumes'] } }),
      resource: pvs,
      excluded: true,
    },
  ])('$name', ({ filter, resource, excluded }) => {
    expect(excludesRelated({ filter, resource })).toBe(excluded);
  });
});
