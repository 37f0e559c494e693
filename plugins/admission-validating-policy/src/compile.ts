// A policy's CEL expressions compiled once per stored version of the policy: validations and their message
// expressions, match conditions, variables and audit annotation values. Every expression sees `object`,
// `oldObject`, `request`, `params`, `namespaceObject`, `variables` and `authorizer`, without a schema (dyn): a name
// that is declared nowhere or a function that does not exist is a compile error; field names are checked
// against the matched kinds' schemas afterwards (typecheck.ts, warnings only) and when the expression runs.
import type { StatusCause, ValidatingAdmissionPolicy } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { compileDynamicExpression, ruleLibraryWith } from '@skiff/plugin-apiextensions/cel';
import { AUTHORIZER_FUNCTIONS } from './authorizer.js';

/** The variables every policy expression may use. */
export const POLICY_VARIABLES = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables', 'authorizer'] as const;

/** The rule library of CRD validation with the authorizer's functions. */
const POLICY_LIBRARY = ruleLibraryWith(AUTHORIZER_FUNCTIONS);

export interface CompiledExpression {
  expression: string;
  /** Set when the expression does not compile; evaluating it is then an error, handled by failurePolicy. */
  error?: string;
  evaluate?: (bindings: Record<string, unknown>) => unknown;
}

export interface CompiledValidation {
  condition: CompiledExpression;
  message?: string;
  messageExpression?: CompiledExpression;
  reason?: string;
}

export interface CompiledPolicy {
  policy: ValidatingAdmissionPolicy;
  failurePolicy: 'Fail' | 'Ignore';
  matchConditions: { name: string; condition: CompiledExpression }[];
  variables: Map<string, CompiledExpression>;
  validations: CompiledValidation[];
  auditAnnotations: { key: string; value: CompiledExpression }[];
}

/** Compiles one expression; `expect` is the type its result must be able to have. */
export function compileExpression(expression: string, expect: 'bool' | 'string' | 'any'): CompiledExpression {
  const compiled = compileDynamicExpression(expression, POLICY_VARIABLES, expect, POLICY_LIBRARY);
  if (compiled.error) return { expression, error: compiled.error.startsWith('ERROR') ? `compilation failed: ${compiled.error}` : compiled.error };
  return { expression, evaluate: compiled.evaluate };
}

export function compilePolicy(policy: ValidatingAdmissionPolicy): CompiledPolicy {
  const spec = policy.spec ?? {};
  return {
    policy,
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchConditions: (spec.matchConditions ?? []).map((c) => ({ name: c.name, condition: compileExpression(c.expression, 'bool') })),
    variables: new Map((spec.variables ?? []).map((v) => [v.name, compileExpression(v.expression, 'any')])),
    validations: (spec.validations ?? []).map((v) => ({
      condition: compileExpression(v.expression, 'bool'),
      message: v.message,
      reason: v.reason,
      messageExpression: v.messageExpression?.trim() ? compileExpression(v.messageExpression, 'string') : undefined,
    })),
    auditAnnotations: (spec.auditAnnotations ?? []).map((a) => ({ key: a.key, value: compileExpression(a.valueExpression, 'any') })),
  };
}

/**
 * What the API server refuses in a policy it is asked to store: expressions that do not compile (as upstream
 * checks them when a policy is written), with the field they sit in.
 */
export function policyCompileCauses(policy: ValidatingAdmissionPolicy): StatusCause[] {
  const compiled = compilePolicy(policy);
  const causes: StatusCause[] = [];
  const check = (path: string, c: CompiledExpression | undefined) => {
    if (c?.error) causes.push(fieldErrors.invalid(path, c.expression, c.error));
  };
  compiled.validations.forEach((v, i) => {
    check(`spec.validations[${i}].expression`, v.condition);
    check(`spec.validations[${i}].messageExpression`, v.messageExpression);
  });
  compiled.matchConditions.forEach((c, i) => check(`spec.matchConditions[${i}].expression`, c.condition));
  [...compiled.variables.values()].forEach((v, i) => check(`spec.variables[${i}].expression`, v));
  compiled.auditAnnotations.forEach((a, i) => check(`spec.auditAnnotations[${i}].valueExpression`, a.value));
  return causes;
}
