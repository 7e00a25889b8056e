/**
 * The data mover as its image bundles it (functions/common/fargate-task.Dockerfile: esbuild, ESM,
 * code split): the repository's KMS key wrapper, loaded on demand, is made in the bundle. A
 * dynamic `import()` of the SDK's CommonJS package there yields only its `default`, so a named
 * client taken from it was undefined ("KMSClient is not a constructor") in every task whose
 * repository is KMS-wrapped; the deployment rehearsal found it (test/rehearsal/data-mover.test.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

describe('the data mover’s bundle', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('makes the KMS key wrapper of a repository when bundled as the image does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'task-bundle-'));
    dirs.push(dir);
    const entry = join(dir, 'entry.ts');
    await writeFile(
      entry,
      `import { repositoryKeyWrapper } from ${JSON.stringify(join(ROOT, 'shared/adapters/data-mover-adapters.ts'))};
const wrapper = await repositoryKeyWrapper({ kmsKeyId: 'arn:aws:kms:eu-west-1:123456789012:key/k-1', region: 'us-east-1' });
process.stdout.write(JSON.stringify({ scheme: wrapper.scheme, keyId: wrapper.keyId }));
`,
    );
    // The Dockerfile's flags.
    await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      splitting: true,
      outdir: join(dir, 'out'),
      entryNames: '[name]',
      chunkNames: '[name]-[hash]',
      outExtension: { '.js': '.mjs' },
      banner: {
        js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
      logLevel: 'silent',
    });
    const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'out', 'entry.mjs')], {
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(JSON.parse(stdout)).toEqual({
      scheme: 'aws-kms',
      keyId: 'arn:aws:kms:eu-west-1:123456789012:key/k-1',
    });
  });
});
