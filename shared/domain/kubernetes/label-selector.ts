/**
 * Kubernetes label selectors (metav1.LabelSelector): matchLabels and matchExpressions with
 * In, NotIn, Exists and DoesNotExist; all terms must hold. An empty selector matches everything.
 */

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export type Labels = Readonly<Record<string, string>>;

export function selectorMatches(selector: LabelSelector, labels: Labels): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, req.key);
    const value = labels[req.key];
    switch (req.operator) {
      case 'In':
        if (!has || value === undefined || !(req.values ?? []).includes(value)) return false;
        break;
      case 'NotIn':
        if (has && value !== undefined && (req.values ?? []).includes(value)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** Velero: `labelSelector` and `orLabelSelectors` are exclusive; with neither, every item matches. */
export function itemSelected(
  options: { labelSelector?: LabelSelector; orLabelSelectors?: readonly LabelSelector[] },
  labels: Labels,
): boolean {
  if (options.labelSelector) return selectorMatches(options.labelSelector, labels);
  if (options.orLabelSelectors && options.orLabelSelectors.length > 0) {
    return options.orLabelSelectors.some((s) => selectorMatches(s, labels));
  }
  return true;
}

/** The selector in the `key=value,key in (a,b)` form the Kubernetes API accepts. */
export function selectorToString(selector: LabelSelector): string {
  const terms = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const req of selector.matchExpressions ?? []) {
    const values = [...(req.values ?? [])].sort().join(',');
    if (req.operator === 'In') terms.push(`${req.key} in (${values})`);
    else if (req.operator === 'NotIn') terms.push(`${req.key} notin (${values})`);
    else if (req.operator === 'Exists') terms.push(req.key);
    else terms.push(`!${req.key}`);
  }
  return terms.join(',');
}

/**
 * Parses the selector syntax of kubectl and `velero --selector`: `k=v`, `k==v`, `k!=v`,
 * `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, comma-separated. Returns undefined when malformed.
 */
export function parseSelector(text: string): LabelSelector | undefined {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: LabelSelectorRequirement[] = [];
  // Split on commas outside parentheses.
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  const key = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;
  for (const raw of terms.map((t) => t.trim())) {
    if (raw === '') return undefined;
    const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(raw);
    if (set) {
      const [, k = '', op, values = ''] = set;
      if (!key.test(k)) return undefined;
      const list = values
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
      matchExpressions.push({ key: k, operator: op === 'in' ? 'In' : 'NotIn', values: list });
      continue;
    }
    const neq = /^([^=!\s]+)\s*!=\s*(\S*)$/.exec(raw);
    if (neq) {
      matchExpressions.push({ key: neq[1] ?? '', operator: 'NotIn', values: [neq[2] ?? ''] });
      continue;
    }
    const eq = /^([^=!\s]+)\s*==?\s*(\S*)$/.exec(raw);
    if (eq) {
      if (!key.test(eq[1] ?? '')) return undefined;
      matchLabels[eq[1] ?? ''] = eq[2] ?? '';
      continue;
    }
    if (raw.startsWith('!') && key.test(raw.slice(1))) {
      matchExpressions.push({ key: raw.slice(1), operator: 'DoesNotExist' });
      continue;
    }
    if (key.test(raw)) {
      matchExpressions.push({ key: raw, operator: 'Exists' });
      continue;
    }
    return undefined;
  }
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
}
