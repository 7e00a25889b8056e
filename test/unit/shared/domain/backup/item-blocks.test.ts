import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildItemBlocks, factsOf, type ItemFacts } from '../../../../../shared/domain/backup/item-blocks.js';
import { type ItemRef, itemIdentity } from '../../../../../shared/domain/kubernetes/item-ref.js';

const ref = (resource: string, namespace: string, name: string, group = '', version = 'v1'): ItemRef => ({
  group,
  version,
  resource,
  namespace,
  name,
});
const pod = (ns: string, name: string, claims: string[] = []): ItemFacts => ({
  ref: ref('pods', ns, name),
  claims,
});
const pvc = (ns: string, name: string, volumeName?: string): ItemFacts =>
  volumeName
    ? { ref: ref('persistentvolumeclaims', ns, name), volumeName }
    : { ref: ref('persistentvolumeclaims', ns, name) };
const pv = (name: string): ItemFacts => ({ ref: ref('persistentvolumes', '', name) });
const cm = (ns: string, name: string): ItemFacts => ({ ref: ref('configmaps', ns, name) });
const names = (blocks: ReturnType<typeof buildItemBlocks>): string[][] =>
  blocks.map((b) => b.items.map((i) => `${i.resource}/${i.namespace}/${i.name}`));

describe('ItemBlocks', () => {
  it('puts a pod with its PVCs and their PVs in one block', () => {
    const blocks = buildItemBlocks({
      items: [pod('a', 'web', ['data']), pvc('a', 'data', 'pv-1'), pv('pv-1'), cm('a', 'settings')],
    });
    expect(names(blocks)).toEqual([
      ['pods/a/web', 'persistentvolumeclaims/a/data', 'persistentvolumes//pv-1'],
      ['configmaps/a/settings'],
    ]);
  });

  it('pulls every pod mounting a shared PVC into the PVC block', () => {
    const blocks = buildItemBlocks({
      items: [
        pvc('a', 'shared', 'pv-s'),
        pod('a', 'one', ['shared']),
        pod('a', 'two', ['shared', 'own']),
        pvc('a', 'own'),
        pv('pv-s'),
      ],
    });
    expect(names(blocks)).toEqual([
      [
        'persistentvolumeclaims/a/shared',
        'persistentvolumes//pv-s',
        'pods/a/one',
        'pods/a/two',
        'persistentvolumeclaims/a/own',
      ],
    ]);
  });

  it('puts a service account with the cluster role bindings naming it and their cluster roles', () => {
    const rbac = 'rbac.authorization.k8s.io';
    const items: ItemFacts[] = [
      { ref: ref('serviceaccounts', 'a', 'robot') },
      {
        ref: ref('clusterrolebindings', '', 'robot-binding', rbac),
        serviceAccounts: [{ namespace: 'a', name: 'robot' }],
        clusterRole: 'robot-role',
      },
      { ref: ref('clusterroles', '', 'robot-role', rbac) },
      { ref: ref('clusterroles', '', 'unrelated', rbac) },
    ];
    expect(names(buildItemBlocks({ items }))).toEqual([
      ['serviceaccounts/a/robot', 'clusterrolebindings//robot-binding', 'clusterroles//robot-role'],
      ['clusterroles//unrelated'],
    ]);
  });

  it('keeps consecutive orderedResources items of one resource in one block, in the given order', () => {
    const blocks = buildItemBlocks({
      items: [cm('a', 'x'), cm('a', 'y'), cm('a', 'z'), cm('a', 'free')],
      orderedResources: { configmaps: ['a/z', 'a/x'] },
    });
    expect(names(blocks)).toEqual([
      ['configmaps/a/z', 'configmaps/a/x'],
      ['configmaps/a/y'],
      ['configmaps/a/free'],
    ]);
  });

  it('keeps one object read under two API versions in one block', () => {
    const v1 = { ref: ref('widgets', 'a', 'w', 'example.com', 'v1') };
    const v2 = { ref: ref('widgets', 'a', 'w', 'example.com', 'v2') };
    const blocks = buildItemBlocks({ items: [v1, cm('a', 'c'), v2] });
    expect(blocks.map((b) => b.items.map((i) => `${i.name}@${i.version}`))).toEqual([
      ['w@v1', 'w@v2'],
      ['c@v1'],
    ]);
  });

  it('ignores relations to items that were not selected', () => {
    const blocks = buildItemBlocks({ items: [pod('a', 'web', ['data'])] });
    expect(names(blocks)).toEqual([['pods/a/web']]);
  });

  it('reads the facts it needs from apiserver objects', () => {
    expect(
      factsOf(ref('pods', 'a', 'p'), {
        spec: {
          volumes: [
            { name: 'd', persistentVolumeClaim: { claimName: 'data' } },
            { name: 'c', configMap: { name: 'x' } },
          ],
        },
      }).claims,
    ).toEqual(['data']);
    expect(
      factsOf(ref('persistentvolumeclaims', 'a', 'c'), { spec: { volumeName: 'pv-9' } }).volumeName,
    ).toBe('pv-9');
    const crb = factsOf(ref('clusterrolebindings', '', 'b', 'rbac.authorization.k8s.io'), {
      subjects: [
        { kind: 'ServiceAccount', namespace: 'a', name: 'robot' },
        { kind: 'User', name: 'alice' },
      ],
      roleRef: { kind: 'ClusterRole', name: 'viewer' },
    });
    expect(crb.serviceAccounts).toEqual([{ namespace: 'a', name: 'robot' }]);
    expect(crb.clusterRole).toBe('viewer');
  });
});

const arbitraryItems = fc
  .record({
    namespaces: fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { minLength: 1 }),
    pods: fc.array(
      fc.record({ ns: fc.nat(2), name: fc.nat(6), claims: fc.array(fc.nat(4), { maxLength: 3 }) }),
      { maxLength: 12 },
    ),
    pvcs: fc.array(fc.record({ ns: fc.nat(2), name: fc.nat(4), pv: fc.option(fc.nat(5)) }), {
      maxLength: 10,
    }),
    pvs: fc.array(fc.nat(5), { maxLength: 6 }),
    configmaps: fc.array(fc.record({ ns: fc.nat(2), name: fc.nat(5), v2: fc.boolean() }), { maxLength: 10 }),
    ordered: fc.array(fc.record({ ns: fc.nat(2), name: fc.nat(5) }), { maxLength: 4 }),
  })
  .map((g) => {
    const ns = (i: number): string => g.namespaces[i % g.namespaces.length] ?? 'a';
    // A PV binds to one claim at most.
    const boundPvs = new Set<number>();
    const pvOf = (pvId: number | null): string | undefined => {
      if (pvId === null || boundPvs.has(pvId)) return undefined;
      boundPvs.add(pvId);
      return `pv-${pvId}`;
    };
    const items: ItemFacts[] = [
      ...g.pods.map((p) =>
        pod(
          ns(p.ns),
          `pod-${p.name}`,
          p.claims.map((c) => `pvc-${c}`),
        ),
      ),
      ...g.pvcs.map((c) => pvc(ns(c.ns), `pvc-${c.name}`, pvOf(c.pv))),
      ...g.pvs.map((p) => pv(`pv-${p}`)),
      ...g.configmaps.flatMap((c) => [
        cm(ns(c.ns), `cm-${c.name}`),
        ...(c.v2 ? [{ ref: ref('configmaps', ns(c.ns), `cm-${c.name}`, '', 'v2') }] : []),
      ]),
    ];
    const orderedResources = { configmaps: g.ordered.map((o) => `${ns(o.ns)}/cm-${o.name}`) };
    // A LIST returns each object once per version: keep the first of generated repeats.
    const seen = new Set<string>();
    const unique = items.filter((f) => {
      const key = `${itemIdentity(f.ref)}@${f.ref.version}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    return { items: unique, orderedResources };
  });

describe('ItemBlock invariants', () => {
  it('puts every selected item in exactly one block and nothing else', () => {
    fc.assert(
      fc.property(arbitraryItems, ({ items, orderedResources }) => {
        const blocks = buildItemBlocks({ items, orderedResources });
        const out = blocks.flatMap((b) => b.items).map((r) => `${itemIdentity(r)}@${r.version}`);
        const expected = new Set(items.map((f) => `${itemIdentity(f.ref)}@${f.ref.version}`));
        expect(new Set(out)).toEqual(expected);
        expect(out.length).toBe(expected.size);
        expect(blocks.every((b) => b.items.length > 0)).toBe(true);
      }),
    );
  });

  it('never splits a pod from a selected PVC it mounts, nor a PVC from its selected PV', () => {
    fc.assert(
      fc.property(arbitraryItems, ({ items, orderedResources }) => {
        const blocks = buildItemBlocks({ items, orderedResources });
        const blockOf = new Map<string, number>();
        blocks.forEach((b, i) => {
          for (const r of b.items) blockOf.set(itemIdentity(r), i);
        });
        for (const f of items) {
          const self = blockOf.get(itemIdentity(f.ref));
          for (const claim of f.claims ?? []) {
            const other = blockOf.get(
              itemIdentity({
                group: '',
                resource: 'persistentvolumeclaims',
                namespace: f.ref.namespace,
                name: claim,
              }),
            );
            if (other !== undefined) expect(other).toBe(self);
          }
          if (f.volumeName) {
            const other = blockOf.get(
              itemIdentity({ group: '', resource: 'persistentvolumes', namespace: '', name: f.volumeName }),
            );
            if (other !== undefined) expect(other).toBe(self);
          }
        }
      }),
    );
  });
});
