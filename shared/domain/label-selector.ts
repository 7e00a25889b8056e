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
