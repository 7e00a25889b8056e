/**
 * The size rule of the layout: no function longer than a screen (FUNCTION_LINES) and no module
 * longer than FILE_LINES in shared/, functions/ and cli/, unless the comment right above the
 * function (or at the top of the module) has a line starting with `Long because` saying why.
 * Lengths count every line from a function's first to its last, nested functions included.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ROOTS = ['shared', 'functions', 'cli'];
const FUNCTION_LINES = 60;
const FILE_LINES = 400;
const JUSTIFIED = /^\s*(?:\/\/|\/\*+|\*)?\s*Long because\b/m;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (name === 'node_modules') return [];
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The comments right above a node (for an arrow function: above its declaration). */
function leadingComments(node: ts.Node, text: string): string {
  let holder: ts.Node = node;
  while (
    holder.parent &&
    (ts.isVariableDeclaration(holder.parent) ||
      ts.isVariableDeclarationList(holder.parent) ||
      ts.isVariableStatement(holder.parent) ||
      ts.isPropertyAssignment(holder.parent) ||
      ts.isPropertyDeclaration(holder.parent))
  ) {
    holder = holder.parent;
  }
  const ranges = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? [];
  return ranges.map((r) => text.slice(r.pos, r.end)).join('\n');
}

function nameOf(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText();
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)))
    return parent.name.getText();
  return '<anonymous>';
}

const isFunction = (node: ts.Node): boolean =>
  ts.isFunctionDeclaration(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isArrowFunction(node) ||
  ts.isFunctionExpression(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node);

/** Every function and module past its limit without a `Long because` comment. */
function oversized(options: { file: string; text: string }): string[] {
  const { file, text } = options;
  const found: string[] = [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines = text.split('\n').length;
  if (lines > FILE_LINES && !JUSTIFIED.test(text.slice(0, 2000)))
    found.push(`${file}: ${lines} lines (at most ${FILE_LINES})`);
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const length = last - first + 1;
      if (length > FUNCTION_LINES && !JUSTIFIED.test(leadingComments(node, text)))
        found.push(`${file}:${first + 1} ${nameOf(node)}: ${length} lines (at most ${FUNCTION_LINES})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the size rule', () => {
  const long = (name: string, body: number): string =>
    `function ${name}(): void {\n${'  step();\n'.repeat(body)}}\n`;

  it('flags a function past the limit and leaves one at the limit alone', () => {
    const text = `${long('atLimit', FUNCTION_LINES - 2)}${long('pastLimit', FUNCTION_LINES - 1)}`;
    expect(oversized({ file: 'x.ts', text })).toEqual([
      `x.ts:${FUNCTION_LINES + 1} pastLimit: 61 lines (at most 60)`,
    ]);
  });

  it('flags long arrow functions and methods, and accepts one whose comment says why', () => {
    const body = '  step();\n'.repeat(FUNCTION_LINES);
    const text = [
      `const arrow = (): void => {\n${body}};`,
      `class C {\n  method(): void {\n${body}  }\n}`,
      `/**\n * A table.\n * Long because every row is one Velero rule.\n */\nconst table = (): void => {\n${body}};`,
    ].join('\n');
    expect(oversized({ file: 'x.ts', text }).map((p) => p.split(' ')[1])).toEqual(['arrow:', 'method:']);
  });

  it('flags a module past the limit unless its header says why', () => {
    const lines = 'export const x = 1;\n'.repeat(FILE_LINES);
    expect(oversized({ file: 'x.ts', text: lines })).toEqual([`x.ts: ${FILE_LINES + 1} lines (at most 400)`]);
    expect(oversized({ file: 'x.ts', text: `// Long because it is generated.\n${lines}` })).toEqual([]);
  });

  // Parses every module: seconds on a quiet machine, far more when the cores are shared.
  it('holds for every module of shared/, functions/ and cli/', () => {
    const files = ROOTS.flatMap((dir) => sourceFiles(join(root, dir)));
    const problems = files.flatMap((full) =>
      oversized({ file: relative(root, full).split(sep).join('/'), text: readFileSync(full, 'utf8') }),
    );
    expect(problems).toEqual([]);
  }, 60_000);
});
