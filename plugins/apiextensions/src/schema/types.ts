// The compiled form of a CRD version's schema (JSONSchemaProps, the generated type) that the custom-resource
// handler uses per served version.
import type { JSONSchemaProps, StatusCause } from '@skiff/api';
import { PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET } from './cel/cost.js';

export type { JSONSchemaProps };

/** Everything one CRD version's schema needs at request time, precomputed once. */
export interface CompiledSchema {
  /**
   * Removes, in place, the fields the schema does not know and the nulls of non-nullable fields without a
   * default; returns the removed fields' paths, sorted (`spec.foo`, `spec.items[0].bar`) — the API server
   * words them as warnings `unknown field "spec.foo"`. apiVersion, kind and metadata at the root and in
   * embedded resources are kept; x-kubernetes-preserve-unknown-fields subtrees are kept.
   */
  prune(object: Record<string, unknown>): string[];
  /** Applies the schema's `default`s in place, in upstream's order; never touches the root's metadata. */
  applyDefaults(object: Record<string, unknown>): void;
  /**
   * Validates a pruned, defaulted object: the OpenAPI keywords, list types and the CEL rules. `old` is the
   * stored object on update: transition rules (those using oldSelf) run only when it is given.
   */
  validate(object: Record<string, unknown>, old?: Record<string, unknown>): StatusCause[];
}

/** Options of {@link compileSchema}. */
export interface CompileOptions {
  /**
   * CEL cost all the rules may spend in one `validate` call, in upstream's cost units (see cel/cost.ts);
   * when it runs out, validation stops with upstream's "running out of cost budget" error.
   * Default {@link DEFAULT_CEL_BUDGET}.
   */
  celBudget?: number;
  /** CEL cost one evaluation of one rule may reach. Default {@link DEFAULT_CEL_CALL_LIMIT}. */
  celCallLimit?: number;
}

/** Upstream's runtime budget per object (RuntimeCELCostBudget). */
export const DEFAULT_CEL_BUDGET = RUNTIME_CEL_COST_BUDGET;
/** Upstream's limit per evaluation (PerCallLimit). */
export const DEFAULT_CEL_CALL_LIMIT = PER_CALL_LIMIT;
