// A webhook's matchConditions: CEL expressions over `object`, `oldObject` and `request` (the AdmissionReview
// request), compiled once per configuration version and run within upstream's cost limits. All true → the
// webhook is called; any false → it is not; an error (and no false) → its failurePolicy decides.
import { isCelError } from '@bufbuild/cel';
import type { MatchCondition, StatusCause } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import {
  celGoError,
  compileDynamicExpression,
  COST_LIMIT_EXCEEDED,
  CostMeter,
  jsonToCel,
  PER_CALL_LIMIT,
  RUNTIME_CEL_COST_BUDGET,
  withMeter,
} from '@skiff/plugin-apiextensions/cel';

/** The variables a webhook's match conditions may use (`authorizer` is not offered: see docs/admission-webhooks.md). */
export const MATCH_CONDITION_VARIABLES = ['object', 'oldObject', 'request'] as const;

interface CompiledCondition {
  name: string;
  expression: string;
  error?: string;
  evaluate?: (bindings: Record<string, unknown>) => unknown;
}

export type CompiledConditions = readonly CompiledCondition[];

export function compileConditions(conditions: readonly MatchCondition[] | undefined): CompiledConditions {
  return (conditions ?? []).map(({ name, expression }) => {
    const compiled = compileDynamicExpression(expression, MATCH_CONDITION_VARIABLES, 'bool');
    if (compiled.error) return { name, expression, error: compiled.error.startsWith('ERROR') ? `compilation failed: ${compiled.error}` : compiled.error };
    return { name, expression, evaluate: compiled.evaluate };
  });
}

/** The expressions a configuration cannot be stored with, as causes of a 422 (upstream checks them on write). */
export function conditionCauses(webhooks: readonly { matchConditions?: MatchCondition[] }[] | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  (webhooks ?? []).forEach((webhook, i) =>
    compileConditions(webhook.matchConditions).forEach((condition, j) => {
      if (condition.error) causes.push(fieldErrors.invalid(`webhooks[${i}].matchConditions[${j}].expression`, condition.expression, condition.error));
    }),
  );
  return causes;
}

export type ConditionsResult = { matches: true } | { matches: false; error?: string };

/** Runs the conditions for one request; `input` holds plain JSON values. */
export function evaluateConditions(conditions: CompiledConditions, input: { object: unknown; oldObject: unknown; request: unknown }): ConditionsResult {
  if (conditions.length === 0) return { matches: true };
  const cache = new WeakMap();
  const bindings = {
    object: jsonToCel(input.object ?? null, cache),
    oldObject: jsonToCel(input.oldObject ?? null, cache),
    request: jsonToCel(input.request, cache),
  };
  let remaining = RUNTIME_CEL_COST_BUDGET;
  const errors: string[] = [];
  for (const condition of conditions) {
    if (condition.error) {
      errors.push(`compilation error: ${condition.error}`);
      continue;
    }
    const meter = new CostMeter(remaining, PER_CALL_LIMIT);
    const result = withMeter(meter, () => condition.evaluate!(bindings));
    remaining -= meter.spent;
    if (meter.exceeded) errors.push(`expression '${condition.expression}' resulted in error: ${COST_LIMIT_EXCEEDED}`);
    else if (isCelError(result)) errors.push(`expression '${condition.expression}' resulted in error: ${celGoError(result.message)}`);
    else if (result === false) return { matches: false };
    else if (result !== true) errors.push(`expression '${condition.expression}' resulted in error: no such overload`);
    if (meter.exceeded === 'budget') break;
  }
  if (errors.length === 0) return { matches: true };
  return { matches: false, error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
}
