// Evaluating one policy for one request, binding and param (upstream's validator): the match conditions,
// then every validation (with its message), then the audit annotations, each phase within upstream's cost
// budget and every expression within the per-call limit. Expressions that fail — they do not compile, they
// hit an error or a limit — become decisions the policy's failurePolicy settles.
import { isCelError, isCelList, isCelMap } from '@bufbuild/cel';
import {
  celGoError,
  COST_LIMIT_EXCEEDED,
  CostMeter,
  PER_CALL_LIMIT,
  RUNTIME_CEL_COST_BUDGET,
  jsonToCel,
  withMeter,
  type ConversionCache,
} from '@skiff/plugin-apiextensions/cel';
import type { CompiledExpression, CompiledPolicy } from './compile.js';

/** The longest message a messageExpression may produce (a longer one falls back to `message`). */
const MAX_MESSAGE_BYTES = 5 * 1024;
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

export interface PolicyDecision {
  action: 'admit' | 'deny';
  evaluation: 'admit' | 'deny' | 'error';
  message?: string;
  /** The Status reason of a denial (Invalid unless the validation names another). */
  reason?: string;
}

export interface AuditAnnotationResult {
  key: string;
  action: 'publish' | 'exclude' | 'error';
  value?: string;
  error?: string;
}

export interface ValidateResult {
  decisions: PolicyDecision[];
  auditAnnotations: AuditAnnotationResult[];
}

/** The values expressions see, as JSON or already converted to CEL. */
export interface PolicyInput {
  object: unknown;
  oldObject: unknown;
  request: unknown;
  params: unknown;
  namespaceObject: unknown;
  /** The `authorizer` (a CEL value made by authorizer.ts). */
  authorizer?: unknown;
  /** Conversions to CEL shared by the evaluations of one request (the same object seen by several policies). */
  cache?: ConversionCache;
}

class OutOfBudget extends Error {}

/** One phase's budget: each expression runs with its own meter, holding what is left and the per-call limit. */
class Budget {
  constructor(private remaining: number) {}

  run(fn: () => unknown): { result?: unknown; limit?: 'call' } {
    const meter = new CostMeter(this.remaining, PER_CALL_LIMIT);
    const result = withMeter(meter, fn);
    this.remaining -= meter.spent;
    if (meter.exceeded === 'budget') throw new OutOfBudget(OUT_OF_BUDGET);
    return meter.exceeded ? { limit: 'call' } : { result };
  }
}

const CEL_MAP = Symbol.for('@bufbuild/cel/map');

/**
 * `variables`: a CEL map whose entries are evaluated the first time an expression reads them, within that
 * expression's meter, and kept for the rest of the evaluation. A variable that fails fails whatever reads it.
 */
class LazyVariables {
  readonly [CEL_MAP] = {};
  private readonly cache = new Map<string, unknown>();
  private readonly evaluating = new Set<string>();
  bindings: Record<string, unknown> = {};

  constructor(private readonly programs: ReadonlyMap<string, CompiledExpression>) {}

  get size(): number {
    return this.programs.size;
  }

  has(key: unknown): boolean {
    return typeof key === 'string' && this.programs.has(key);
  }

  get(key: unknown): unknown {
    if (typeof key !== 'string') return undefined;
    const program = this.programs.get(key);
    if (!program) return undefined;
    if (!this.cache.has(key)) {
      if (program.error) throw new Error(`composited variable "${key}" fails to compile: ${program.error}`);
      if (this.evaluating.has(key)) throw new Error(`composited variable "${key}" refers to itself`);
      this.evaluating.add(key);
      try {
        this.cache.set(key, program.evaluate!(this.bindings));
      } finally {
        this.evaluating.delete(key);
      }
    }
    const value = this.cache.get(key);
    if (isCelError(value)) throw new Error(value.message);
    return value;
  }

  keys(): IterableIterator<string> {
    return this.programs.keys();
  }

  *entries(): IterableIterator<[string, unknown]> {
    for (const key of this.programs.keys()) yield [key, this.get(key)];
  }

  *values(): IterableIterator<unknown> {
    for (const key of this.programs.keys()) yield this.get(key);
  }

  forEach(callback: (value: unknown, key: string, map: this) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }

  [Symbol.iterator](): IterableIterator<[string, unknown]> {
    return this.entries();
  }
}

interface Outcome {
  value?: unknown;
  error?: string;
}

/** Runs one expression: its value, or the error upstream words for it. */
function run(budget: Budget, compiled: CompiledExpression, bindings: Record<string, unknown>): Outcome {
  if (compiled.error) return { error: `compilation error: ${compiled.error}` };
  const { result, limit } = budget.run(() => compiled.evaluate!(bindings));
  if (limit) return { error: `expression '${compiled.expression}' resulted in error: ${COST_LIMIT_EXCEEDED}` };
  if (isCelError(result)) return { error: `expression '${compiled.expression}' resulted in error: ${celGoError(result.message)}` };
  return { value: result };
}

function messageOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const message = value.trim();
  if (message === '' || message.includes('\n') || Buffer.byteLength(message) > MAX_MESSAGE_BYTES) return undefined;
  return message;
}

function bindingsFor(input: PolicyInput, variables: LazyVariables): Record<string, unknown> {
  const cache = input.cache ?? new WeakMap();
  const cel = (value: unknown) => (isCelMap(value) || isCelList(value) ? value : jsonToCel(value, cache));
  const bindings = {
    object: cel(input.object),
    oldObject: cel(input.oldObject),
    request: cel(input.request),
    params: cel(input.params),
    namespaceObject: cel(input.namespaceObject),
    variables,
    authorizer: input.authorizer ?? null,
  };
  variables.bindings = bindings;
  return bindings;
}

/** The match conditions: all true → evaluate; any false → skip the policy; errors → failurePolicy. */
function matchConditions(compiled: CompiledPolicy, bindings: Record<string, unknown>): { matches: boolean; error?: string } {
  if (compiled.matchConditions.length === 0) return { matches: true };
  const budget = new Budget(RUNTIME_CEL_COST_BUDGET);
  const errors: string[] = [];
  for (const { condition } of compiled.matchConditions) {
    const outcome = run(budget, condition, bindings);
    if (outcome.error !== undefined) errors.push(outcome.error);
    else if (outcome.value === false) return { matches: false };
  }
  if (errors.length === 0) return { matches: true };
  return { matches: false, error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
}

/** Evaluates a compiled policy for one request (and one param). */
export function validatePolicy(compiled: CompiledPolicy, input: PolicyInput): ValidateResult {
  const onError: PolicyDecision['action'] = compiled.failurePolicy === 'Ignore' ? 'admit' : 'deny';
  const failed = (message: string): ValidateResult => ({ decisions: [{ action: onError, evaluation: 'error', message }], auditAnnotations: [] });
  const variables = new LazyVariables(compiled.variables);
  const bindings = bindingsFor(input, variables);
  try {
    const match = matchConditions(compiled, bindings);
    if (match.error !== undefined) return compiled.failurePolicy === 'Ignore' ? { decisions: [], auditAnnotations: [] } : failed(match.error);
    if (!match.matches) return { decisions: [], auditAnnotations: [] };

    const budget = new Budget(RUNTIME_CEL_COST_BUDGET);
    const decisions = compiled.validations.map((validation): PolicyDecision => {
      const outcome = run(budget, validation.condition, bindings);
      if (outcome.error !== undefined) return { action: onError, evaluation: 'error', message: outcome.error };
      if (outcome.value === true) return { action: 'admit', evaluation: 'admit' };
      let message: string | undefined;
      if (validation.messageExpression) {
        const evaluated = run(budget, validation.messageExpression, bindings);
        message = evaluated.error === undefined ? messageOf(evaluated.value) : undefined;
      }
      message ??= validation.message?.trim() || `failed expression: ${validation.condition.expression.trim()}`;
      return { action: 'deny', evaluation: 'deny', message, reason: validation.reason || 'Invalid' };
    });

    const annotationBudget = new Budget(RUNTIME_CEL_COST_BUDGET);
    const auditAnnotations = compiled.auditAnnotations.map(({ key, value }): AuditAnnotationResult => {
      const outcome = run(annotationBudget, value, bindings);
      const onAnnotationError = compiled.failurePolicy === 'Ignore' ? 'exclude' : 'error';
      if (outcome.error !== undefined) return { key, action: onAnnotationError, error: outcome.error };
      if (outcome.value === null) return { key, action: 'exclude' };
      if (typeof outcome.value !== 'string')
        return {
          key,
          action: 'error',
          error: `valueExpression '${value.expression}' resulted in unsupported return type: ${celTypeName(outcome.value)}. Return type must be either string or null.`,
        };
      const text = outcome.value.trim();
      return text === '' ? { key, action: 'exclude' } : { key, action: 'publish', value: text };
    });
    return { decisions, auditAnnotations };
  } catch (err) {
    if (err instanceof OutOfBudget) return failed(err.message);
    throw err;
  }
}

function celTypeName(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    default:
      if (value instanceof Uint8Array) return 'bytes';
      if (isCelList(value)) return 'list';
      return isCelMap(value) ? 'map' : typeof value;
  }
}
