/**
 * The dependency direction of CONVENTIONS.md, read from the import lines of every source file:
 * functions, cli, infra → shared/{runtime, adapters, contracts} → shared/ports ← shared/domain.
 * The domain imports only itself; only adapters import the AWS SDK or the Kubernetes client.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SOURCE_ROOTS = ['shared', 'functions', 'cli', 'infra'];

type Layer =
  | 'domain'
  | 'ports'
  | 'contracts'
  | 'adapters'
  | 'runtime'
  | 'functions'
  | 'cli'
  | 'infra'
  | 'test'
  | 'other';

function layerOf(path: string): Layer {
  const parts = path.split('/');
  if (parts[0] === 'shared') {
    const layer = parts[1];
    if (
      layer === 'domain' ||
      layer === 'ports' ||
      layer === 'contracts' ||
      layer === 'adapters' ||
      layer === 'runtime'
    ) {
      return layer;
    }
    return 'other';
  }
  if (parts[0] === 'functions' || parts[0] === 'cli' || parts[0] === 'infra' || parts[0] === 'test')
    return parts[0];
  return 'other';
}

/** Project layers each layer may import. */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  domain: ['domain'],
  ports: ['ports', 'domain'],
  contracts: ['contracts', 'domain'],
  runtime: ['runtime', 'contracts', 'ports', 'domain'],
  adapters: ['adapters', 'runtime', 'contracts', 'ports', 'domain'],
  functions: ['functions', 'runtime', 'adapters', 'contracts', 'ports', 'domain'],
  cli: ['cli', 'functions', 'runtime', 'adapters', 'contracts', 'ports', 'domain'],
  infra: ['infra', 'contracts', 'domain'],
  test: ['test', 'functions', 'cli', 'infra', 'runtime', 'adapters', 'contracts', 'ports', 'domain'],
  other: [],
};

const PLATFORM_CLIENT = /^(@aws-sdk\/|@smithy\/|@kubernetes\/client-node)/;
/**
 * Packages the pure domain may use: none with I/O or a framework, only pure implementations of
 * formats (JSON patch, RFC 6902, for restore resource modifiers).
 */
const DOMAIN_ALLOWED_PACKAGES: readonly string[] = ['fast-json-patch'];

function violation(options: { file: string; specifier: string }): string | undefined {
  const { file, specifier } = options;
  const from = layerOf(file);
  if (specifier.startsWith('.')) {
    const target = relative(root, resolve(root, dirname(file), specifier))
      .split(sep)
      .join('/');
    const to = layerOf(target);
    if (!ALLOWED[from].includes(to)) return `${file}: the ${from} layer may not import ${to} (${specifier})`;
    return undefined;
  }
  if (from === 'domain' && !DOMAIN_ALLOWED_PACKAGES.includes(specifier)) {
    return `${file}: the domain imports only itself, not '${specifier}'`;
  }
  if (PLATFORM_CLIENT.test(specifier) && from !== 'adapters' && from !== 'test') {
    return `${file}: only shared/adapters may import '${specifier}'`;
  }
  return undefined;
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(source: string): string[] {
  return [...source.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3] ?? '').filter(Boolean);
}

function sourceFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const full = join(dir, name);
    if (name === 'node_modules' || name === 'cdk.out') return [];
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|js|mjs)$/.test(name) ? [full] : [];
  });
}

describe('the dependency rule', () => {
  it.each([
    { file: 'shared/domain/filters.ts', specifier: './globs.js', allowed: true },
    { file: 'shared/domain/filters.ts', specifier: '../ports/object-store.js', allowed: false },
    { file: 'shared/domain/filters.ts', specifier: 'zod', allowed: false },
    { file: 'shared/domain/filters.ts', specifier: 'node:fs', allowed: false },
    { file: 'shared/ports/object-store.ts', specifier: '../domain/storage-keys.js', allowed: true },
    { file: 'shared/ports/object-store.ts', specifier: '../adapters/s3-object-store.js', allowed: false },
    { file: 'shared/contracts/backup.ts', specifier: 'zod', allowed: true },
    { file: 'shared/contracts/backup.ts', specifier: '@aws-sdk/client-s3', allowed: false },
    { file: 'shared/adapters/s3-object-store.ts', specifier: '@aws-sdk/client-s3', allowed: true },
    { file: 'shared/adapters/kubernetes.ts', specifier: '@kubernetes/client-node', allowed: true },
    { file: 'shared/runtime/logger.ts', specifier: '@kubernetes/client-node', allowed: false },
    { file: 'functions/collect-items/handler.ts', specifier: '@aws-sdk/client-sqs', allowed: false },
    {
      file: 'functions/collect-items/handler.ts',
      specifier: '../../shared/adapters/sqs-queue.js',
      allowed: true,
    },
    { file: 'functions/collect-items/handler.ts', specifier: '../../cli/main.js', allowed: false },
    { file: 'shared/adapters/s3-object-store.ts', specifier: '../../functions/x/handler.js', allowed: false },
    { file: 'infra/lifeboat-stack.ts', specifier: 'aws-cdk-lib', allowed: true },
    { file: 'infra/lifeboat-stack.ts', specifier: '../shared/adapters/s3-object-store.js', allowed: false },
  ])('$file importing $specifier is allowed: $allowed', ({ file, specifier, allowed }) => {
    expect(violation({ file, specifier }) === undefined).toBe(allowed);
  });

  it('finds every form of import line', () => {
    const source = [
      "import type { A } from '../ports/a.js';",
      "import { b,\n  c } from 'zod';",
      "export { d } from './d.js';",
      "import './side-effect.js';",
      "const e = await import('node:fs');",
    ].join('\n');
    expect(importsOf(source)).toEqual(['../ports/a.js', 'zod', './d.js', './side-effect.js', 'node:fs']);
  });

  it('holds for every source file of the project', () => {
    const files = SOURCE_ROOTS.flatMap((dir) => sourceFiles(join(root, dir)));
    const problems = files.flatMap((full) => {
      const file = relative(root, full).split(sep).join('/');
      return importsOf(readFileSync(full, 'utf8'))
        .map((specifier) => violation({ file, specifier }))
        .filter((p): p is string => p !== undefined);
    });
    expect(problems).toEqual([]);
  });
});
