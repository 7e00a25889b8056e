import { describe, expect, it } from 'vitest';
import {
  dnsLabelProblem,
  dnsSubdomainProblem,
  labelValueProblem,
  namespacePatternProblem,
  qualifiedNameProblem,
  resourcePatternProblem,
} from '../../../../../shared/domain/kubernetes/names.js';

describe('DNS-1123 labels (namespace names)', () => {
  it.each(['a', 'app', 'app-1', '0', 'a'.repeat(63)])('accepts %j', (name) => {
    expect(dnsLabelProblem(name)).toBeUndefined();
  });

  it.each([
    ['', /must not be empty/],
    ['UPPER', /lowercase RFC 1123 label/],
    ['a b', /lowercase RFC 1123 label/],
    ['../x', /lowercase RFC 1123 label/],
    ['-a', /lowercase RFC 1123 label/],
    ['a-', /lowercase RFC 1123 label/],
    ['a.b', /lowercase RFC 1123 label/],
    ['a'.repeat(64), /no more than 63 characters/],
    ['a\u0000b', /lowercase RFC 1123 label/],
  ])('refuses %j', (name, message) => {
    expect(dnsLabelProblem(name)).toMatch(message);
  });
});

describe('DNS-1123 subdomains (object names)', () => {
  it.each(['default', 'a.b-c', `${'a'.repeat(63)}.${'b'.repeat(63)}`])('accepts %j', (name) => {
    expect(dnsSubdomainProblem(name)).toBeUndefined();
  });

  it.each([
    ['', /must not be empty/],
    ['Bad Location!', /lowercase RFC 1123 subdomain/],
    ['a\u0000', /lowercase RFC 1123 subdomain/],
    ['a..b', /lowercase RFC 1123 subdomain/],
    ['a'.repeat(254), /no more than 253 characters/],
    ['x'.repeat(1 << 20), /no more than 253 characters/],
  ])('refuses %j', (name, message) => {
    expect(dnsSubdomainProblem(name)).toMatch(message);
  });
});

describe('label keys (qualified names) and values', () => {
  it.each(['app', 'app.kubernetes.io/name', 'A_b.c-D', 'velero.io/volume-group', 'k8s.io/x'])(
    'accepts the key %j',
    (key) => {
      expect(qualifiedNameProblem(key)).toBeUndefined();
    },
  );

  it.each([
    ['', /must not be empty/],
    ['a b', /name part must consist of alphanumeric/],
    ['-a', /name part must consist of alphanumeric/],
    ['a/b/c', /at most one "\/"/],
    ['/a', /prefix part must not be empty/],
    ['Example.com/a', /prefix part must be a lowercase RFC 1123 subdomain/],
    ['a/', /name part must not be empty/],
    ['k'.repeat(400), /name part must be no more than 63 characters/],
    [`${'p'.repeat(254)}/a`, /prefix part must be no more than 253 characters/],
  ])('refuses the key %j', (key, message) => {
    expect(qualifiedNameProblem(key)).toMatch(message);
  });

  it.each(['', 'web', 'v1.2_3-x', 'a'.repeat(63)])('accepts the value %j', (value) => {
    expect(labelValueProblem(value)).toBeUndefined();
  });

  it.each([
    ['a b', /must be empty or consist of alphanumeric/],
    ['-a', /must be empty or consist of alphanumeric/],
    ['a/b', /must be empty or consist of alphanumeric/],
    ['v'.repeat(64), /no more than 63 characters/],
  ])('refuses the value %j', (value, message) => {
    expect(labelValueProblem(value)).toMatch(message);
  });
});

describe('namespace names and globs (Velero)', () => {
  it.each(['*', 'app', 'kube-*', '*-prod', 'app-?', 'app-[0-9]', 'app-[!a-c]', '{prod,stage}-*', 'a*b'])(
    'accepts %j',
    (pattern) => {
      expect(namespacePatternProblem(pattern)).toBeUndefined();
    },
  );

  it.each([
    ['UPPER', /lowercase RFC 1123 label/],
    ['a b', /lowercase RFC 1123 label/],
    ['ns-[', /not a valid glob pattern/],
    ['ns-{a', /not a valid glob pattern/],
    ['x'.repeat(300), /no more than 63 characters/],
    [`${'x'.repeat(300)}*`, /no more than 253 characters/],
    ['../x', /lowercase RFC 1123 label/],
    ['../*', /"\."/],
    ['app-**', /consecutive asterisks/],
    ['a|b*', /\|/],
    ['App-*', /"A"/],
    ['app-[A-Z]', /class/],
    ['{a b,c}-*', /alternative/],
    ['{,}-*', /empty/],
    ['-*', /no namespace name can match it/],
    ['*-', /no namespace name can match it/],
  ])('refuses %j', (pattern, message) => {
    expect(namespacePatternProblem(pattern)).toMatch(message);
  });
});

describe('resource names and globs', () => {
  it.each(['*', 'pods', 'deployments.apps', 'Deployment', 'deploy', '*.apps', 'widgets.example.com', 'v?'])(
    'accepts %j',
    (pattern) => {
      expect(resourcePatternProblem(pattern)).toBeUndefined();
    },
  );

  it.each([
    ['', /must not be empty/],
    ['[bad', /not a valid glob pattern/],
    ['pods/log', /"\/"/],
    ['a b', /" "/],
    ['x'.repeat(400), /no more than 253 characters/],
  ])('refuses %j', (pattern, message) => {
    expect(resourcePatternProblem(pattern)).toMatch(message);
  });
});
