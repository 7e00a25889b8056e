/** The label selector flags of `backup create` and `restore create`, parsed and checked by name. */
import { type LabelSelector, parseSelector } from '../shared/domain/kubernetes/label-selector.js';
import { UsageError } from './flags.js';

/** `--selector` and `--or-selector` (alternatives split on ` or `), each checked by name. */
export function labelSelectors(values: { readonly selector?: string; readonly 'or-selector'?: string }): {
  labelSelector: LabelSelector | undefined;
  orLabelSelectors: LabelSelector[] | undefined;
} {
  const selector = values.selector === undefined ? undefined : parseSelector(values.selector);
  if (values.selector !== undefined && !selector)
    throw new UsageError(`--selector: "${values.selector}" is not a label selector`);
  const orSelectors = values['or-selector']?.split(' or ').map((s) => {
    const parsed = parseSelector(s);
    if (!parsed) throw new UsageError(`--or-selector: "${s}" is not a label selector`);
    return parsed;
  });
  if (selector && orSelectors) throw new UsageError('--selector and --or-selector exclude each other');
  return { labelSelector: selector, orLabelSelectors: orSelectors };
}
