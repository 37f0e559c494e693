// node.k8s.io/v1: runtime classes.
import { defineKind, RESOURCES, type ResourceDefinition, type RuntimeClass, type StatusCause } from '@skiff/api';
import { fieldErrors, isDNS1123Label, validateImmutable, validateLabels, validateTolerations } from '@skiff/api/validation';
import { AGE_COLUMN, column } from './columns.js';

const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

function validateRuntimeClass(rc: RuntimeClass, old?: RuntimeClass): StatusCause[] {
  const causes: StatusCause[] = [];
  // The handler names a CRI configuration on the nodes; the generic check reports it missing.
  if (rc.handler) causes.push(...isDNS1123Label(rc.handler).map((message) => fieldErrors.invalid('handler', rc.handler, message)));
  for (const [name, quantity] of Object.entries(rc.overhead?.podFixed ?? {})) {
    const text = String(quantity);
    if (!QUANTITY.test(text) || text.startsWith('-'))
      causes.push(fieldErrors.invalid(`overhead.podFixed[${name}]`, text, 'must be greater than or equal to 0'));
  }
  if (rc.scheduling) {
    causes.push(...validateLabels(rc.scheduling.nodeSelector, 'scheduling.nodeSelector'));
    causes.push(...validateTolerations(rc.scheduling.tolerations, 'scheduling.tolerations'));
  }
  if (old) causes.push(...validateImmutable(rc.handler, old.handler, 'handler'));
  return causes;
}

export const runtimeClasses = defineKind<RuntimeClass>({
  ...{},
  ...RESOURCES.runtimeclasses,
  columns: [column('Handler', '.handler'), AGE_COLUMN],
  strategy: { validate: validateRuntimeClass },
});

export const NODE_KINDS: ResourceDefinition[] = [runtimeClasses];
