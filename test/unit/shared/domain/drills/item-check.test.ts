import { describe, expect, it } from 'vitest';
import { dataDifferences } from '../../../../../shared/domain/drills/item-check.js';

const secret = (data: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', namespace: 'a', uid: 'one' },
  type: 'Opaque',
  data,
  ...extra,
});
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('comparing a restored item with the backup', () => {
  it('finds a Secret equal whatever its metadata', () => {
    const live = { ...secret({ password: b64('p') }), metadata: { name: 's', namespace: 'b', uid: 'two' } };
    expect(dataDifferences({ item: live, backedUp: secret({ password: b64('p') }), live })).toEqual([]);
  });

  it('names the keys that differ, never their values', () => {
    const backedUp = secret({ password: b64('hunter2'), user: b64('u') });
    const live = secret({ password: b64('stale'), token: b64('t'), user: b64('u') });
    const found = dataDifferences({ item: live, backedUp, live });
    expect(found).toEqual(['data.password', 'data.token']);
    expect(JSON.stringify(found)).not.toMatch(/hunter2|stale|aHVudGVyMg/);
  });

  it("compares a Secret's stringData as the apiserver stores it", () => {
    const backedUp = secret({ password: b64('p') });
    const live = secret({}, { stringData: { password: 'p' } });
    expect(dataDifferences({ item: live, backedUp, live })).toEqual([]);
  });

  it("names a Secret's type", () => {
    const live = secret({ a: b64('1') }, { type: 'kubernetes.io/tls' });
    expect(dataDifferences({ item: live, backedUp: secret({ a: b64('1') }), live })).toEqual(['type']);
  });

  it('compares a ConfigMap by data and binaryData only', () => {
    const cm = (data: Record<string, string>, labels: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', labels },
      data,
    });
    expect(
      dataDifferences({ item: cm({}, {}), backedUp: cm({ a: '1' }, { x: '1' }), live: cm({ a: '1' }, {}) }),
    ).toEqual([]);
    expect(
      dataDifferences({ item: cm({}, {}), backedUp: cm({ a: '1' }, {}), live: cm({ a: '2' }, {}) }),
    ).toEqual(['data.a']);
  });

  it('compares a custom resource in every field but metadata and status, keys in any order', () => {
    const widget = (spec: Record<string, unknown>, status: Record<string, unknown>) => ({
      apiVersion: 'example.io/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec,
      status,
    });
    const item = widget({}, {});
    expect(
      dataDifferences({
        item,
        backedUp: widget({ a: 1, b: [1, 2] }, { ok: true }),
        live: widget({ b: [1, 2], a: 1 }, {}),
      }),
    ).toEqual([]);
    expect(dataDifferences({ item, backedUp: widget({ a: 1 }, {}), live: widget({ a: 2 }, {}) })).toEqual([
      'spec',
    ]);
  });
});
