/**
 * The dependency direction of CONVENTIONS.md, read from the import lines of every source file:
 * functions, cli, infra → shared/{runtime, adapters, contracts} → shared/ports ← shared/domain.
 * The domain imports only itself; only adapters import the AWS SDK or the Kubernetes client.
 * Inside the domain, subdomains import only those below them (SUBDOMAINS), and no module of the
 * whole tree, tests included, is part of an import cycle.
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
 * formats (JSON patch, RFC 6902, for restore resource modifiers; cron expressions, for schedules).
 */
const DOMAIN_ALLOWED_PACKAGES: readonly string[] = ['fast-json-patch', 'cron-parser'];

/**
 * The domain's subdomains (one folder each) and the ones each may import. `kubernetes/` holds what
 * all of them use; the layout of what a storage location holds (`storage/`) comes next; the data
 * mover's formats (`repository/`, `files/`) stand alone. The domain's `errors.ts` is for all.
 */
const SUBDOMAINS: Record<string, readonly string[]> = {
  kubernetes: [],
  storage: ['kubernetes'],
  backup: ['kubernetes', 'storage'],
  volumes: ['kubernetes', 'storage'],
  hooks: ['kubernetes', 'storage', 'backup'],
  restore: ['kubernetes', 'storage', 'hooks', 'volumes'],
  recipes: ['kubernetes', 'storage', 'backup', 'hooks', 'restore'],
  repository: [],
  files: [],
  schedules: ['kubernetes', 'storage', 'backup'],
};
const DOMAIN_ROOT_FILES: readonly string[] = ['errors.ts'];

/** Where a domain file sits: its subdomain, or '' for the domain's own root files. */
function subdomainOf(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'shared' || parts[1] !== 'domain') return undefined;
  return parts.length > 3 ? (parts[2] ?? '') : '';
}

function subdomainViolation(options: {
  file: string;
  target: string;
  specifier: string;
}): string | undefined {
  const { file, target, specifier } = options;
  const from = subdomainOf(file);
  const to = subdomainOf(target);
  if (from === undefined || to === undefined) return undefined;
  if (from === '') {
    if (!DOMAIN_ROOT_FILES.includes(file.split('/')[2] ?? ''))
      return `${file}: the domain's root holds only ${DOMAIN_ROOT_FILES.join(', ')}; put it in a subdomain`;
    return to === '' ? undefined : `${file}: the domain's root files import no subdomain (${specifier})`;
  }
  const allowed = SUBDOMAINS[from];
  if (allowed === undefined) return `${file}: '${from}' is not a subdomain listed in SUBDOMAINS`;
  if (to === '' || to === from || allowed.includes(to)) return undefined;
  return `${file}: the ${from} subdomain may not import ${to} (${specifier})`;
}

function violation(options: { file: string; specifier: string }): string | undefined {
  const { file, specifier } = options;
  const from = layerOf(file);
  if (specifier.startsWith('.')) {
    const target = relative(root, resolve(root, dirname(file), specifier))
      .split(sep)
      .join('/');
    const to = layerOf(target);
    if (!ALLOWED[from].includes(to)) return `${file}: the ${from} layer may not import ${to} (${specifier})`;
    return subdomainViolation({ file, target, specifier });
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
    { file: 'shared/domain/backup/plan.ts', specifier: './item-blocks.js', allowed: true },
    { file: 'shared/domain/backup/plan.ts', specifier: '../kubernetes/glob.js', allowed: true },
    { file: 'shared/domain/backup/plan.ts', specifier: '../errors.js', allowed: true },
    { file: 'shared/domain/backup/plan.ts', specifier: '../restore/item.js', allowed: false },
    { file: 'shared/domain/backup/plan.ts', specifier: '../../ports/object-store.js', allowed: false },
    { file: 'shared/domain/backup/plan.ts', specifier: 'zod', allowed: false },
    { file: 'shared/domain/backup/plan.ts', specifier: 'node:fs', allowed: false },
    { file: 'shared/domain/kubernetes/glob.ts', specifier: '../storage/keys.js', allowed: false },
    { file: 'shared/domain/repository/gc.ts', specifier: '../restore/order.js', allowed: false },
    { file: 'shared/domain/restore/item.ts', specifier: '../hooks/restore.js', allowed: true },
    { file: 'shared/domain/hooks/restore.ts', specifier: '../restore/item.js', allowed: false },
    { file: 'shared/domain/filters.ts', specifier: './kubernetes/glob.js', allowed: false },
    { file: 'shared/domain/errors.ts', specifier: './kubernetes/glob.js', allowed: false },
    { file: 'shared/domain/other/thing.ts', specifier: '../kubernetes/glob.js', allowed: false },
    { file: 'shared/ports/object-store.ts', specifier: '../domain/storage/keys.js', allowed: true },
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

  it('holds for every subdomain folder there is', () => {
    const folders = readdirSync(join(root, 'shared', 'domain')).filter((name) =>
      statSync(join(root, 'shared', 'domain', name)).isDirectory(),
    );
    expect(folders.sort()).toEqual(Object.keys(SUBDOMAINS).sort());
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

/** The module a relative import names, as a path from the root, when it is one of `known`. */
function resolvedImport(options: {
  file: string;
  specifier: string;
  known: ReadonlySet<string>;
}): string | undefined {
  const { file, specifier, known } = options;
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(root, resolve(root, dirname(file), specifier))
    .split(sep)
    .join('/');
  return [target, target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts')].find((t) => known.has(t));
}

/** Strongly connected groups of more than one module (Tarjan), each an import cycle. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

describe('import cycles', () => {
  it('finds a cycle of two modules and of three, and none in a chain', () => {
    expect(
      importCycles(
        new Map([
          ['a', ['b']],
          ['b', ['a']],
          ['c', ['d']],
          ['d', ['e']],
          ['e', ['c']],
          ['f', ['g']],
          ['g', []],
        ]),
      ),
    ).toEqual([
      ['a', 'b'],
      ['c', 'd', 'e'],
    ]);
  });

  it('there are none among the modules of the whole tree, type imports included', () => {
    const files = [...SOURCE_ROOTS, 'test'].flatMap((dir) => sourceFiles(join(root, dir)));
    const paths = files.map((full) => relative(root, full).split(sep).join('/'));
    const known = new Set(paths);
    const graph = new Map(
      paths.map((file): [string, string[]] => [
        file,
        importsOf(readFileSync(join(root, file), 'utf8'))
          .map((specifier) => resolvedImport({ file, specifier, known }))
          .filter((t): t is string => t !== undefined),
      ]),
    );
    expect(importCycles(graph)).toEqual([]);
  });
});
