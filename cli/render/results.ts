/**
 * A backup's or restore's warnings and errors with their text, as `velero backup|restore
 * describe` prints them (`describeResult`): "Warnings:" and "Errors:", each with its Velero,
 * Cluster and Namespaces scopes, every namespace's messages under its name. A section is shown
 * when its count is not zero, as Velero shows it.
 */
import type { Result, Results } from '../../shared/domain/storage/results.js';

/** `label:` and the messages in a column after it, `<none>` without any. */
function scoped(options: {
  readonly indent: string;
  readonly label: string;
  readonly messages: readonly string[] | undefined;
  readonly width: number;
}): string[] {
  const { indent, label, messages, width } = options;
  if (!messages?.length) return [`${indent}${`${label}:`.padEnd(width)}<none>`];
  return messages.map((m, i) => `${indent}${(i === 0 ? `${label}:` : '').padEnd(width)}${m}`);
}

function section(title: string, result: Result): string[] {
  const lines = [`${title}:`];
  lines.push(...scoped({ indent: '  ', label: 'Velero', messages: result.velero, width: 10 }));
  lines.push(...scoped({ indent: '  ', label: 'Cluster', messages: result.cluster, width: 10 }));
  const namespaces = Object.keys(result.namespaces ?? {}).sort();
  if (namespaces.length === 0) return [...lines, '  Namespaces: <none>'];
  const width = Math.max(...namespaces.map((ns) => ns.length)) + 3;
  lines.push('  Namespaces:');
  for (const ns of namespaces)
    lines.push(...scoped({ indent: '    ', label: ns, messages: result.namespaces?.[ns], width }));
  return lines;
}

/**
 * The sections for the counts given, each after a blank line; without the results file (a
 * backup older than it), the counts alone, as Velero prints them then.
 */
export function renderResults(options: {
  readonly results: Results | undefined;
  readonly counts: { readonly warnings?: number; readonly errors?: number };
}): string[] {
  const { results, counts } = options;
  const warnings = counts.warnings ?? 0;
  const errors = counts.errors ?? 0;
  if (!results) return warnings || errors ? ['', `Errors:    ${errors}`, `Warnings:  ${warnings}`] : [];
  return [
    ...(warnings > 0 ? ['', ...section('Warnings', results.warnings)] : []),
    ...(errors > 0 ? ['', ...section('Errors', results.errors)] : []),
  ];
}
