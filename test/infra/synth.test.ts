/**
 * The template checks of the deployable stack, on the assembly the README's own command makes
 * with no AWS environment (test/rehearsal/assembly.ts): the synth succeeds (CDK's validation of
 * the template and cdk-nag's AwsSolutions rules fail it on any finding: cdk.json turns validation
 * findings into errors), and cfn-lint reports nothing beyond the exceptions justified in
 * cfn-lint-exceptions.ts.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ensureTools } from '../env/ensure-tools.js';
import { ROOT, synthesizedAssembly } from '../rehearsal/assembly.js';
import { CFN_LINT_EXCEPTIONS } from './cfn-lint-exceptions.js';

const run = promisify(execFile);

interface LintFinding {
  readonly Rule: { readonly Id: string };
  readonly Message: string;
  readonly Filename: string;
}

async function lint(options: { cfnLint: string; template: string }): Promise<LintFinding[]> {
  // cfn-lint exits non-zero when it finds anything; its JSON is on stdout either way.
  const result = await run(options.cfnLint, ['--format', 'json', options.template], {
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string; code?: number }) => {
    if (typeof error.stdout !== 'string' || error.stdout.trim() === '') throw error;
    return { stdout: error.stdout };
  });
  return JSON.parse(result.stdout) as LintFinding[];
}

describe('the synthesized stack', () => {
  // Made once, by the first test that needs it; a failed synth fails each test with its output.
  let made: Promise<{ assembly: string; templates: string[] }> | undefined;
  const synthesized = () => {
    made ??= synthesizedAssembly().then(async (assembly) => ({
      assembly,
      templates: (await readdir(assembly)).filter((f) => f.endsWith('.template.json')),
    }));
    return made;
  };

  it('synthesizes with no AWS account, region or credentials, with no validation or cdk-nag finding', {
    timeout: 300_000,
  }, async () => {
    const { assembly, templates } = await synthesized();
    const manifest = JSON.parse(await readFile(join(assembly, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string; environment?: string }>;
    };
    const stacks = Object.values(manifest.artifacts).filter((a) => a.type === 'aws:cloudformation:stack');
    // No account anywhere; the CLI's default region (us-east-1) when none is configured.
    expect(stacks.map((s) => s.environment)).toEqual([expect.stringMatching(/^aws:\/\/unknown-account\//)]);
    expect(templates).toEqual(['Lifeboat.template.json']);
  });

  it('passes cfn-lint on every template but for the justified exceptions, each still needed', async () => {
    const { assembly, templates } = await synthesized();
    const { cfnLint } = await ensureTools();
    const findings = (
      await Promise.all(templates.map((t) => lint({ cfnLint, template: join(assembly, t) })))
    ).flat();
    const excepted = (f: LintFinding) =>
      CFN_LINT_EXCEPTIONS.find((e) => e.rule === f.Rule.Id && e.message.test(f.Message));
    const unexpected = findings
      .filter((f) => !excepted(f))
      .map((f) => `${f.Rule.Id} ${f.Message} (${f.Filename.replace(`${ROOT}/`, '')})`);
    expect(unexpected).toEqual([]);
    const unused = CFN_LINT_EXCEPTIONS.filter((e) => !findings.some((f) => excepted(f) === e));
    expect(unused.map((e) => e.rule)).toEqual([]);
  });
});

describe('the CDK app given a bad context value', () => {
  it.each([
    ['lifeboat:objectLock', 'nope', '-c lifeboat:objectLock must be GOVERNANCE or COMPLIANCE, not "NOPE"'],
    ['lifeboat:drSource', 'my-bucket', '-c lifeboat:drSource must be an S3 bucket ARN, not "my-bucket"'],
  ])('names %s and prints no stack trace', { timeout: 120_000 }, async (key, value, message) => {
    const failed = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'infra/bin/app.ts')], {
      cwd: ROOT,
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ [key]: value }), LIFEBOAT_DEBUG: '' },
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`error: ${message}`);
    expect(failed?.stderr).not.toMatch(/^\s+at /m);
  });
});
