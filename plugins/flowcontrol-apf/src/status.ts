import type { FlowSchema, FlowSchemaCondition } from '@skiff/api';

export const DANGLING = 'Dangling';

/**
 * The Dangling condition a FlowSchema should carry: True when the priority level it references does not exist
 * (its requests then go to the next matching schema), False when it does.
 */
export function danglingCondition(flowSchema: FlowSchema, levelExists: boolean, now: () => string): FlowSchemaCondition {
  const level = flowSchema.spec.priorityLevelConfiguration.name;
  const current = flowSchema.status?.conditions?.find((condition) => condition.type === DANGLING);
  const status = levelExists ? 'False' : 'True';
  return {
    type: DANGLING,
    status,
    lastTransitionTime: current?.status === status && current.lastTransitionTime ? current.lastTransitionTime : now(),
    reason: levelExists ? 'Found' : 'NotFound',
    message: levelExists
      ? `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists`
      : `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object`,
  };
}

/** The status conditions with `condition` in place of the schema's Dangling one, or undefined when nothing changes. */
export function conditionsWith(flowSchema: FlowSchema, condition: FlowSchemaCondition): FlowSchemaCondition[] | undefined {
  const conditions = flowSchema.status?.conditions ?? [];
  const current = conditions.find((existing) => existing.type === DANGLING);
  if (current && current.status === condition.status && current.reason === condition.reason && current.message === condition.message) return undefined;
  return [...conditions.filter((existing) => existing.type !== DANGLING), condition];
}
