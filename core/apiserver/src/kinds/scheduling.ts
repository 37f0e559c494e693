// scheduling.k8s.io/v1: priority classes.
import { defineKind, RESOURCES, type PriorityClass, type ResourceDefinition, type StatusCause } from '@skiff/api';
import { fieldErrors, validateImmutable } from '@skiff/api/validation';
import { AGE_COLUMN, computed } from './columns.js';

const SYSTEM_PREFIX = 'system-';
/** Values above this belong to the system classes. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;

/** The classes the API server creates itself; their names, values and global-default flags are fixed. */
export const SYSTEM_PRIORITY_CLASSES: Readonly<Record<string, { value: number; globalDefault: boolean }>> = Object.freeze({
  'system-node-critical': { value: 2_000_001_000, globalDefault: false },
  'system-cluster-critical': { value: 2_000_000_000, globalDefault: false },
});

function systemClassError(pc: PriorityClass): string | undefined {
  const name = pc.metadata.name ?? '';
  const known = SYSTEM_PRIORITY_CLASSES[name];
  if (!known) return `${name} is not a known system priority class`;
  if ((pc.value ?? 0) !== known.value) return `value of ${name} PriorityClass must be ${known.value}`;
  if ((pc.globalDefault ?? false) !== known.globalDefault) return `globalDefault of ${name} PriorityClass must be ${known.globalDefault}`;
  return undefined;
}

function validatePriorityClass(pc: PriorityClass, old?: PriorityClass): StatusCause[] {
  const causes: StatusCause[] = [];
  if ((pc.metadata.name ?? '').startsWith(SYSTEM_PREFIX)) {
    const error = systemClassError(pc);
    if (error)
      causes.push(
        fieldErrors.forbidden('metadata.name', `priority class names with '${SYSTEM_PREFIX}' prefix are reserved for system use only. error: ${error}`),
      );
  } else if ((pc.value ?? 0) > HIGHEST_USER_DEFINABLE_PRIORITY) {
    causes.push(fieldErrors.forbidden('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  if (old) {
    if ((pc.value ?? 0) !== (old.value ?? 0)) causes.push(fieldErrors.forbidden('value', 'may not be changed in an update.'));
    causes.push(...validateImmutable(pc.preemptionPolicy, old.preemptionPolicy, 'preemptionPolicy'));
  }
  return causes;
}

export const priorityClasses = defineKind<PriorityClass>({
  ...{},
  ...RESOURCES.priorityclasses,
  columns: [
    computed<PriorityClass>('Value', (pc) => pc.value ?? 0, { type: 'integer' }),
    computed<PriorityClass>('Global-Default', (pc) => pc.globalDefault ?? false, { type: 'boolean' }),
    AGE_COLUMN,
    computed<PriorityClass>('PreemptionPolicy', (pc) => pc.preemptionPolicy ?? '', { priority: 1 }),
  ],
  strategy: {
    defaults(pc) {
      pc.preemptionPolicy ??= 'PreemptLowerPriority';
    },
    validate: validatePriorityClass,
  },
});

export const SCHEDULING_KINDS: ResourceDefinition[] = [priorityClasses];
