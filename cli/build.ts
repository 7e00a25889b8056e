/**
 * `npm run build`: the `lifeboat` command compiled into dist/, a package of its own that runs on
 * a bare Node 20.19+ with no TypeScript loader and no registry: every dependency is bundled
 * (its package.json lists none), code split so a verb loads only what it needs (lib/: the
 * program lifeboat.mjs, the ItemBlock worker thread and the data mover's and hook runner's
 * entries, and the chunks they share), the state machine definitions beside it, and the notices
 * of the bundled packages' licenses. `npm pack ./dist` makes the tarball. Writes only dist/.
 */
import { chmod, cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { COMPILED_PROGRAMS } from './local/runtime-files.js';

const ROOT = resolve(import.meta.dirname, '..');

/** What the build wrote: the package's folder and esbuild's record of every output's inputs. */
export interface BuiltPackage {
  readonly dir: string;
  readonly metafile: Metafile;
}

/** Every output is an ES module in lib/; CommonJS dependencies get the `require` they expect. */
const BANNER = [
  "import { createRequire as __lifeboatCreateRequire } from 'node:module';",
  'const require = __lifeboatCreateRequire(import.meta.url);',
].join('\n');

async function compile(lib: string): Promise<Metafile> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { lifeboat: 'cli/bin/lifeboat.ts', ...COMPILED_PROGRAMS },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    outdir: lib,
    entryNames: '[name]',
    // In one folder with the entries, so that runtime-files.ts finds them from any chunk.
    chunkNames: '[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    banner: { js: BANNER },
    // Only the sources' worker thread bundles itself with esbuild (item-block-threads.ts).
    external: ['esbuild'],
    minify: true,
    keepNames: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
  });
  // A warning may mean code that behaves otherwise once bundled: no package then.
  if (result.warnings.length > 0)
    throw new Error(`the build has warnings: ${result.warnings.map((w) => w.text).join('; ')}`);
  return result.metafile;
}

/** The package.json of dist/: the command and nothing to install. */
async function manifest(): Promise<string> {
  const own = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  return `${JSON.stringify(
    {
      name: own.name,
      version: own.version,
      description: own.description,
      license: own.license,
      type: 'module',
      engines: own.engines,
      bin: { lifeboat: 'lib/lifeboat.mjs' },
    },
    null,
    2,
  )}\n`;
}

/** The packages whose code is in the bundle, from esbuild's inputs: `node_modules/@a/b/…` → `@a/b`. */
function bundledPackages(metafile: Metafile): string[] {
  const names = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match?.[1]) names.add(match[1]);
  }
  return [...names].sort();
}

/**
 * Each bundled package's name, version and license, and the license texts, as their licenses
 * ask: packages with the same text (the AWS SDK's hundred) share one copy of it.
 */
async function notices(metafile: Metafile): Promise<string> {
  const byText = new Map<string, string[]>();
  for (const name of bundledPackages(metafile)) {
    const dir = join(ROOT, 'node_modules', name);
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      version?: string;
      license?: string;
    };
    const text = await licenseText(dir);
    byText.set(text, [
      ...(byText.get(text) ?? []),
      `${name} ${pkg.version ?? ''} (${pkg.license ?? 'see the package'})`,
    ]);
  }
  const sections = [...byText].map(([text, packages]) => `## ${packages.join(', ')}\n\n${text}`);
  return `# Third-party software in this package\n\n${sections.join('\n\n')}\n`;
}

async function licenseText(dir: string): Promise<string> {
  for (const file of ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license', 'LICENCE', 'license.md']) {
    const text = await readFile(join(dir, file), 'utf8').catch(() => undefined);
    if (text !== undefined) return text.trim();
  }
  return '(the package ships no license file)';
}

/** Builds the package into `dir` (default dist/), replacing what was there. */
export async function buildPackage(options: { readonly dir?: string } = {}): Promise<BuiltPackage> {
  const dir = resolve(options.dir ?? join(ROOT, 'dist'));
  await rm(dir, { recursive: true, force: true });
  const lib = join(dir, 'lib');
  await mkdir(lib, { recursive: true });
  const metafile = await compile(lib);
  await chmod(join(lib, 'lifeboat.mjs'), 0o755);
  await cp(join(ROOT, 'statemachines'), join(dir, 'statemachines'), {
    recursive: true,
    filter: (source) => !source.endsWith('.ts'),
  });
  await writeFile(join(dir, 'package.json'), await manifest());
  await writeFile(join(dir, 'THIRD-PARTY-NOTICES.md'), await notices(metafile));
  return { dir, metafile };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const built = await buildPackage();
  const outputs = Object.entries(built.metafile.outputs);
  const bytes = outputs.reduce((n, [, o]) => n + o.bytes, 0);
  process.stdout.write(
    `built ${relative(process.cwd(), built.dir) || '.'}: ${outputs.length} modules, ${(bytes / 2 ** 20).toFixed(1)} MiB; pack it with npm pack ./dist\n`,
  );
}
