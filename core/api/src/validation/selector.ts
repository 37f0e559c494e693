import type { LabelSelector, StatusCause } from '../types.js';
import { child, forbidden, GoLiteral, goQuote, goStringMap, goStringSlice, index, invalid, required } from './field.js';
import { validateLabelName, validateLabels } from './meta.js';
import { isValidLabelValue } from './names.js';

/** ValidateLabelSelector: valid keys and values, and operators that agree with their values. */
export function validateLabelSelector(selector: LabelSelector | undefined, field: string): StatusCause[] {
  if (!selector) return [];
  const causes = validateLabels(selector.matchLabels, child(field, 'matchLabels'));
  (selector.matchExpressions ?? []).forEach((requirement, i) => {
    const path = index(child(field, 'matchExpressions'), i);
    const values = requirement.values ?? [];
    switch (requirement.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) causes.push(required(child(path, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) causes.push(forbidden(child(path, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        causes.push(invalid(child(path, 'operator'), requirement.operator ?? '', 'not a valid selector operator'));
    }
    causes.push(...validateLabelName(requirement.key ?? '', child(path, 'key')));
    values.forEach((value, j) => {
      causes.push(...isValidLabelValue(value).map((message) => invalid(index(child(path, 'values'), j), value, message)));
    });
  });
  return causes;
}

/** Whether a selector selects nothing in particular: no matchLabels and no matchExpressions. */
export function isEmptySelector(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0;
}

/** A LabelSelector as Go's `%#v` prints it in field errors. */
export function goLabelSelector(selector: LabelSelector | undefined): GoLiteral {
  if (!selector) return new GoLiteral('"null"');
  const expressions = selector.matchExpressions
    ? `[]v1.LabelSelectorRequirement{${selector.matchExpressions
        .map((r) => `v1.LabelSelectorRequirement{Key:${goQuote(r.key ?? '')}, Operator:${goQuote(r.operator ?? '')}, Values:${goStringSlice(r.values).text}}`)
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return new GoLiteral(`v1.LabelSelector{MatchLabels:${goStringMap(selector.matchLabels).text}, MatchExpressions:${expressions}}`);
}
