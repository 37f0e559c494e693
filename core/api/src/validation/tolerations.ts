import type { StatusCause, Toleration } from '../types.js';
import { child, index, invalid, notSupported, required } from './field.js';
import { validateLabelName } from './meta.js';
import { isValidLabelValue } from './names.js';

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

export function validateTaintEffect(effect: string | undefined, allowEmpty: boolean, field: string): StatusCause[] {
  if (!effect) return allowEmpty ? [] : [required(field)];
  return (TAINT_EFFECTS as readonly string[]).includes(effect) ? [] : [notSupported(field, effect, TAINT_EFFECTS)];
}

/** ValidateTolerations: keys, operators that agree with their values, and effects. */
export function validateTolerations(tolerations: Toleration[] | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  (tolerations ?? []).forEach((toleration, i) => {
    const path = index(field, i);
    const operator = toleration.operator ?? '';
    const value = toleration.value ?? '';
    if (toleration.key) causes.push(...validateLabelName(toleration.key, child(path, 'key')));
    if (!toleration.key && operator !== 'Exists') {
      causes.push(invalid(child(path, 'operator'), operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (toleration.tolerationSeconds !== undefined && toleration.effect !== 'NoExecute') {
      causes.push(invalid(child(path, 'effect'), toleration.effect ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (operator) {
      case 'Equal':
      case '': {
        const problems = isValidLabelValue(value);
        if (problems.length) causes.push(invalid(child(path, 'operator'), value, problems.join(';')));
        break;
      }
      case 'Exists':
        if (value) causes.push(invalid(child(path, 'operator'), value, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        causes.push(notSupported(child(path, 'operator'), operator, ['Equal', 'Exists']));
    }
    if (toleration.effect) causes.push(...validateTaintEffect(toleration.effect, true, child(path, 'effect')));
  });
  return causes;
}
