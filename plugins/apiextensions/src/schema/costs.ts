// Whether a CRD version's CEL rules fit upstream's static budgets: each rule's estimated cost, times the
// most times its node can occur in one object, within STATIC_ESTIMATED_COST_LIMIT (a messageExpression on
// its own), and all of them together within STATIC_ESTIMATED_CRD_COST_LIMIT. Refusals are worded and
// placed as upstream's (…x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget…).
import type { StatusCause } from '@skiff/api';
import { forbidden } from './causes.js';
import { STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT } from './cel/cost.js';
import { unboundedCardinality } from './cel/estimate.js';
import type { SchemaNode } from './node.js';
import type { JSONSchemaProps } from './types.js';

/** How many of the most expensive rules a refusal of the total names (those above 1% of the limit). */
const MOST_EXPENSIVE_NAMED = 4;
const NAMED_FROM = STATIC_ESTIMATED_CRD_COST_LIMIT / 100;

/** Upstream's wording: the factor by which an estimate exceeds its limit, and what to do about it. */
export function costErrorMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const shown = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/**
 * How many times a schema's children can occur per occurrence of the schema: maxProperties of a map,
 * maxItems of a list, 1 for the fields of an object; undefined when unbounded.
 */
function childFactor(s: JSONSchemaProps): number | undefined {
  switch (s.type) {
    case 'object':
      return s.additionalProperties !== undefined ? s.maxProperties : 1;
    case 'array':
      return s.maxItems;
    default:
      return 1;
  }
}

/** What checkRuleCosts found. */
export interface RuleCosts {
  /** The refusals (none when the rules fit). */
  causes: StatusCause[];
  /** Estimated cost of all the rules (each times its cardinality). */
  total: number;
}

/**
 * Checks the estimated costs of the rules of `schema` (compiled as `root`); `path` names the schema
 * (`spec.versions[0].schema.openAPIV3Schema`). Rules that did not compile are left to the compile errors.
 */
export function checkRuleCosts(schema: JSONSchemaProps, root: SchemaNode, path: string): RuleCosts {
  const causes: StatusCause[] = [];
  const observed: { path: string; cost: number }[] = [];
  let total = 0;
  const observe = (at: string, cost: number) => {
    total += cost;
    if (cost >= NAMED_FROM) observed.push({ path: at, cost });
  };

  const visit = (s: JSONSchemaProps, node: SchemaNode, at: string, cardinality: number | undefined) => {
    (s['x-kubernetes-validations'] ?? []).forEach((rule, i) => {
      const program = node.rules[i];
      if (!program || program.error || program.cost === undefined) return;
      const rulePath = `${at}.x-kubernetes-validations[${i}]`;
      const times = cardinality ?? unboundedCardinality(node);
      const cost = program.cost === 0 ? 0 : program.cost * times;
      if (cost > STATIC_ESTIMATED_COST_LIMIT)
        causes.push(forbidden(`${rulePath}.rule`, costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)));
      observe(`${rulePath}.rule`, cost);
      if (program.messageError || program.messageCost === undefined) return;
      // Upstream holds a messageExpression to the limit as it is: it is evaluated only when its rule fails.
      if (program.messageCost > STATIC_ESTIMATED_COST_LIMIT) {
        causes.push(
          forbidden(`${rulePath}.messageExpression`, costErrorMessage('estimated messageExpression cost', program.messageCost, STATIC_ESTIMATED_COST_LIMIT)),
        );
      }
      observe(`${rulePath}.messageExpression`, program.messageCost);
    });
    const factor = childFactor(s);
    const childCardinality = cardinality === undefined || factor === undefined ? undefined : cardinality * Math.max(0, factor);
    for (const [name, sub] of Object.entries(s.properties ?? {})) {
      const child = node.properties?.get(name);
      if (child) visit(sub, child, `${at}.properties[${name}]`, childCardinality);
    }
    if (typeof s.additionalProperties === 'object' && typeof node.additional === 'object') {
      visit(s.additionalProperties, node.additional, `${at}.additionalProperties`, childCardinality);
    }
    if (s.items && !Array.isArray(s.items) && node.items) visit(s.items, node.items, `${at}.items`, childCardinality);
  };
  visit(schema, root, path, 1);

  if (total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    const named = observed.sort((a, b) => b.cost - a.cost).slice(0, MOST_EXPENSIVE_NAMED);
    for (const rule of named) causes.push(forbidden(rule.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    causes.push(
      forbidden(
        path,
        costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total, STATIC_ESTIMATED_CRD_COST_LIMIT),
      ),
    );
  }
  return { causes, total };
}
