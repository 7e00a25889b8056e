/**
 * What a file job's start-up compiles: the data mover's entry bundled as the image bundles it
 * (functions/common/fargate-task.Dockerfile), and the modules its entry chunk loads before the job
 * starts (static imports, followed). Start-up is most of a small re-run's CPU, and compile time
 * grows with what is loaded: block mode's code, the EC2 client, and zod's translations of its
 * messages (all of them, when `z` is imported by name rather than as a namespace) stay out.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** The inputs of the entry chunk and of every chunk it imports statically. */
function loadedAtStart(metafile: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const inputs: string[] = [];
  const visit = (output: string): void => {
    if (seen.has(output)) return;
    seen.add(output);
    const chunk = metafile.outputs[output];
    if (!chunk) return;
    inputs.push(...Object.keys(chunk.inputs));
    for (const imported of chunk.imports) if (imported.kind === 'import-statement') visit(imported.path);
  };
  visit(entry);
  return inputs;
}

describe('the data mover entry bundle', () => {
  it('loads neither block mode, the EC2 client nor zod locales before a job starts', async () => {
    // Prepare: the image's esbuild options (code split), written nowhere.
    const result = await build({
      absWorkingDir: root,
      entryPoints: ['functions/data-mover/main.ts'],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      splitting: true,
      outdir: join(root, 'out-not-written'),
      entryNames: '[name]',
      outExtension: { '.js': '.mjs' },
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const entry = Object.keys(result.metafile.outputs).find((o) => o.endsWith('main.mjs')) ?? '';

    // Act
    const loaded = loadedAtStart(result.metafile, entry);

    // Assess: the entry is found, and what it loads is the file path's.
    expect(loaded).toContain('functions/data-mover/file-backup.ts');
    expect(loaded.filter((i) => /functions\/data-mover\/block-/.test(i))).toEqual([]);
    expect(loaded.filter((i) => i.includes('@aws-sdk/client-ec2'))).toEqual([]);
    expect(loaded.filter((i) => /zod\/v4\/locales\/(?!en\.js)/.test(i))).toEqual([]);
  });
});
