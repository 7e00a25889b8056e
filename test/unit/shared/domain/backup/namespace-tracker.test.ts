import { describe, expect, it } from 'vitest';
import {
  missingIncludedNamespaces,
  type NamespaceFacts,
  namespaceTracked,
} from '../../../../../shared/domain/backup/namespace-tracker.js';

const app = { matchLabels: { app: 'shop' } };

describe("Velero's namespace tracker", () => {
  it.each([
    {
      why: 'no selector: the namespace filter decides',
      ns: { name: 'shop', labels: {}, active: true },
      sel: { namespaces: { includes: ['shop'], excludes: [] } },
      expected: true,
    },
    {
      why: 'no selector: a namespace the filter leaves out is not backed up',
      ns: { name: 'db', labels: {}, active: true },
      sel: { namespaces: { includes: ['shop'], excludes: [] } },
      expected: false,
    },
    {
      why: 'a terminating namespace without selected items is left out',
      ns: { name: 'shop', labels: {}, active: false },
      sel: { namespaces: { includes: ['shop'], excludes: [] } },
      expected: false,
    },
    {
      why: 'a namespace holding selected items is always kept',
      ns: { name: 'shop', labels: {}, active: false },
      sel: { namespaces: { includes: ['other'], excludes: [] }, items: ['shop'] },
      expected: true,
    },
    {
      why: 'selector and all namespaces: a namespace without matching items is left out (Velero 7105)',
      ns: { name: 'shop', labels: {}, active: true },
      sel: { namespaces: { includes: ['*'], excludes: [] }, labelSelector: app },
      expected: false,
    },
    {
      why: 'selector and all namespaces: a namespace whose own labels match is kept',
      ns: { name: 'shop', labels: { app: 'shop' }, active: true },
      sel: { namespaces: { includes: [], excludes: [] }, labelSelector: app },
      expected: true,
    },
    {
      why: 'an OR selector matching the namespace keeps it',
      ns: { name: 'shop', labels: { tier: 'db' }, active: true },
      sel: {
        namespaces: { includes: [], excludes: [] },
        orLabelSelectors: [app, { matchLabels: { tier: 'db' } }],
      },
      expected: true,
    },
    {
      why: 'selector with a named namespace filter: the named namespace is kept even without items',
      ns: { name: 'shop', labels: {}, active: true },
      sel: { namespaces: { includes: ['shop'], excludes: [] }, labelSelector: app },
      expected: true,
    },
    {
      why: 'selector with an exclude list: included namespaces are kept (the filter does not take everything)',
      ns: { name: 'shop', labels: {}, active: true },
      sel: { namespaces: { includes: [], excludes: ['kube-*'] }, labelSelector: app },
      expected: true,
    },
  ])('$why', ({ ns, sel, expected }) => {
    const tracked = namespaceTracked(ns as NamespaceFacts, {
      namespaces: sel.namespaces,
      labelSelector: sel.labelSelector,
      orLabelSelectors: sel.orLabelSelectors,
      withSelectedItems: new Set(sel.items ?? []),
    });
    expect(tracked).toBe(expected);
  });

  it('reports literally named namespaces the cluster lacks, never patterns', () => {
    const existing = new Set(['shop', 'db']);
    expect(missingIncludedNamespaces(['shop', 'gone', 'app-*', 'a?', '[ab]x', '*'], existing)).toEqual([
      'gone',
    ]);
  });
});
