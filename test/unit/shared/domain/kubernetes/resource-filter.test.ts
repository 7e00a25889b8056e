import { describe, expect, it } from 'vitest';
import {
  collectsResource,
  combineWithIncludeExcludePolicy,
  excludesRelated,
  type PolicyResourceLists,
  type ResourceFilter,
} from '../../../../../shared/domain/kubernetes/resource-filter.js';

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

describe("a resource policy's includeExcludePolicy joined to the backup's filters (Velero CombineWithPolicy)", () => {
  const lists = (o: { ci?: string[]; ce?: string[]; ni?: string[]; ne?: string[] }): PolicyResourceLists => ({
    clusterScoped: { includes: o.ci ?? [], excludes: o.ce ?? [] },
    namespaceScoped: { includes: o.ni ?? [], excludes: o.ne ?? [] },
  });
  const filterOf = (o: { ci?: string[]; ce?: string[]; ni?: string[]; ne?: string[] }): ResourceFilter => ({
    style: 'scoped',
    ...lists(o),
  });
  const collects = (filter: ResourceFilter, groupResource: string, namespaced: boolean): boolean =>
    collectsResource({ filter, namespaces: all, resource: { groupResource, namespaced } });

  it.each([
    {
      name: 'with no conflict, the policy adds to the backup',
      own: filterOf({
        ni: ['pods'],
        ne: ['configmaps'],
        ce: ['customresourcedefinitions.apiextensions.k8s.io'],
      }),
      policy: lists({ ni: ['deployments.apps'], ne: ['secrets'], ci: ['persistentvolumes'] }),
      expected: filterOf({
        ni: ['pods', 'deployments.apps'],
        ne: ['configmaps', 'secrets'],
        ci: ['persistentvolumes'],
        ce: ['customresourcedefinitions.apiextensions.k8s.io'],
      }),
    },
    {
      name: 'where both speak of a resource, the backup wins',
      own: filterOf({
        ni: ['pods', 'deployments.apps'],
        ne: ['configmaps'],
        ci: ['customresourcedefinitions.apiextensions.k8s.io'],
        ce: ['persistentvolumes'],
      }),
      policy: lists({
        ni: ['configmaps'],
        ne: ['pods', 'secrets'],
        ci: ['persistentvolumes'],
        ce: ['customresourcedefinitions.apiextensions.k8s.io'],
      }),
      expected: filterOf({
        ni: ['pods', 'deployments.apps'],
        ne: ['configmaps', 'secrets'],
        ci: ['customresourcedefinitions.apiextensions.k8s.io'],
        ce: ['persistentvolumes'],
      }),
    },
    {
      name: "the backup's include of * includes everything the policy would exclude",
      own: filterOf({ ni: ['*'] }),
      policy: lists({ ni: ['deployments.apps', 'pods'], ne: ['configmaps', 'secrets'] }),
      expected: filterOf({ ni: ['*'] }),
    },
    {
      name: "a pattern of the backup's decides for the resources it matches",
      own: filterOf({ ne: ['*.example.com'] }),
      policy: lists({ ni: ['widgets.example.com', 'pods'] }),
      expected: filterOf({ ni: ['pods'], ne: ['*.example.com'] }),
    },
    {
      name: 'a backup without resource filters takes the policy lists as its scoped filters',
      own: { style: 'old', resources: { includes: [], excludes: [] } } as ResourceFilter,
      policy: lists({ ne: ['secrets'], ci: ['storageclasses.storage.k8s.io'] }),
      expected: filterOf({ ne: ['secrets'], ci: ['storageclasses.storage.k8s.io'] }),
    },
    {
      name: 'old filters are left as they are (validation refuses them beside the policy)',
      own: { style: 'old', resources: { includes: ['pods'], excludes: [] } } as ResourceFilter,
      policy: lists({ ne: ['secrets'] }),
      expected: { style: 'old', resources: { includes: ['pods'], excludes: [] } },
    },
    {
      name: 'includeClusterResources alone is an old filter too',
      own: {
        style: 'old',
        resources: { includes: [], excludes: [] },
        includeClusterResources: true,
      } as ResourceFilter,
      policy: lists({ ne: ['secrets'] }),
      expected: { style: 'old', resources: { includes: [], excludes: [] }, includeClusterResources: true },
    },
    {
      name: 'an empty policy changes nothing',
      own: filterOf({ ni: ['pods'] }),
      policy: lists({}),
      expected: filterOf({ ni: ['pods'] }),
    },
  ])('$name', ({ own, policy, expected }) => {
    expect(combineWithIncludeExcludePolicy(own, policy)).toEqual(expected);
  });

  it('collects what the joined filters select: policy excludes out, backup includes kept', () => {
    const filter = combineWithIncludeExcludePolicy(
      { style: 'old', resources: { includes: [], excludes: [] } },
      lists({ ne: ['configmaps', 'secrets'], ce: ['storageclasses.storage.k8s.io'] }),
    );
    expect(collects(filter, 'configmaps', true)).toBe(false);
    expect(collects(filter, 'secrets', true)).toBe(false);
    expect(collects(filter, 'pods', true)).toBe(true);
    expect(collects(filter, 'storageclasses.storage.k8s.io', false)).toBe(false);
    // Velero: with cluster-scoped lists, or a namespace-scoped list narrowed, cluster-scoped
    // types come only when included, or pulled in as related items (a PVC's PV).
    expect(collects(filter, 'persistentvolumes', false)).toBe(false);
    expect(excludesRelated({ filter, resource: pvs })).toBe(false);
    const overridden = combineWithIncludeExcludePolicy(
      filterOf({ ni: ['secrets', 'pods'] }),
      lists({ ne: ['secrets'], ni: ['configmaps'] }),
    );
    expect(collects(overridden, 'secrets', true)).toBe(true);
    expect(collects(overridden, 'configmaps', true)).toBe(true);
    expect(collects(overridden, 'services', true)).toBe(false);
  });

  it('never changes the filter it is given', () => {
    const own = filterOf({ ni: ['pods'], ne: [] });
    const before = structuredClone(own);
    combineWithIncludeExcludePolicy(own, lists({ ni: ['services'], ne: ['secrets'] }));
    expect(own).toEqual(before);
  });
});
