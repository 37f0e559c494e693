// policy/v1: pod disruption budgets.
import { defineKind, RESOURCES, type PodDisruptionBudget, type PodDisruptionBudgetSpec, type ResourceDefinition, type StatusCause } from '@skiff/api';
import { fieldErrors, isValidPercent, validateLabelSelector, validateNonnegative } from '@skiff/api/validation';
import { AGE_COLUMN, computed } from './columns.js';

type IntOrString = number | string;

/** A count (at least 0) or a percentage (at most 100%). */
function validateIntOrPercent(value: IntOrString, field: string): StatusCause[] {
  if (typeof value === 'number') return validateNonnegative(value, field);
  const problems = isValidPercent(value);
  if (problems.length > 0) return problems.map((message) => fieldErrors.invalid(field, value, message));
  return Number(value.slice(0, -1)) > 100 ? [fieldErrors.invalid(field, value, 'must not be greater than 100%')] : [];
}

function validatePDB(pdb: PodDisruptionBudget): StatusCause[] {
  const spec: PodDisruptionBudgetSpec = pdb.spec ?? {};
  const causes: StatusCause[] = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined)
    causes.push(fieldErrors.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  if (spec.minAvailable !== undefined) causes.push(...validateIntOrPercent(spec.minAvailable, 'spec.minAvailable'));
  if (spec.maxUnavailable !== undefined) causes.push(...validateIntOrPercent(spec.maxUnavailable, 'spec.maxUnavailable'));
  causes.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  return causes;
}

const budgetCell = (value: IntOrString | undefined) => (value === undefined ? 'N/A' : String(value));

export const podDisruptionBudgets = defineKind<PodDisruptionBudget>({
  ...{},
  ...RESOURCES.poddisruptionbudgets,
  subresources: ['status'],
  columns: [
    computed('Min Available', (pdb) => budgetCell(pdb.spec?.minAvailable)),
    computed('Max Unavailable', (pdb) => budgetCell(pdb.spec?.maxUnavailable)),
    computed('Allowed Disruptions', (pdb) => pdb.status?.disruptionsAllowed ?? 0, { type: 'integer' }),
    AGE_COLUMN,
  ],
  strategy: {
    // The disruption controller fills the status in; until then nothing may be disrupted.
    prepareForCreate(pdb) {
      pdb.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    },
    validate: validatePDB,
  },
});

export const POLICY_KINDS: ResourceDefinition[] = [podDisruptionBudgets];
