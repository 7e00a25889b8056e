/**
 * Documents users keep in ConfigMaps (resource policies, recipes): the one data key such a
 * ConfigMap must have, and its YAML decoded as Kubernetes tooling decodes it (YAML 1.1, one
 * document, duplicate keys refused, aliases capped against alias bombs). Problems name the
 * field path; nothing here throws on bad input.
 */
import { parseDocument } from 'yaml';
import type { ValidationResult } from './kubernetes.js';
import { YAML_1_1 } from './yaml-options.js';

export interface ConfigMapData {
  readonly namespace?: string;
  readonly name: string;
  readonly data?: Readonly<Record<string, string>> | null;
}

/** The only data entry, with the path prefix its problems take; `what` names the document. */
export function onlyDataEntry(
  configMap: ConfigMapData,
  problem: (where: string, keys: number) => string,
): ValidationResult<{ readonly text: string; readonly prefix: string }> {
  const entries = Object.entries(configMap.data ?? {});
  const [only] = entries;
  if (entries.length !== 1 || !only) {
    const where = `${configMap.namespace ? `${configMap.namespace}/` : ''}${configMap.name}`;
    return { ok: false, problems: [{ path: 'data', message: problem(where, entries.length) }] };
  }
  const [key, text] = only;
  return { ok: true, value: { text, prefix: `data[${JSON.stringify(key)}]` } };
}

/** YAML (or JSON) text as plain data; a syntax error names its line. */
export function decodeYaml(yamlText: string, path: string): ValidationResult<unknown> {
  const doc = parseDocument(yamlText, { ...YAML_1_1, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      // The first line says what and where ("... at line 2, column 1"); the rest quotes the source.
      problems: doc.errors.map((e) => ({
        path,
        message: `YAML: ${(e.message.split('\n')[0] ?? '').replace(/:$/, '')}`,
      })),
    };
  }
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (error) {
    return { ok: false, problems: [{ path, message: `YAML: ${(error as Error).message}` }] };
  }
}
