// Running x-kubernetes-validations over a custom resource: every rule at every non-null value its node
// describes, with `self` the value and `oldSelf` the value at the same place in the stored object (found
// through object keys and the keys of list-type=map lists; other lists do not correlate).
import { isCelError } from '@bufbuild/cel';
import type { StatusCause } from '@skiff/api';
import { CAUSE_TYPE } from '@skiff/api/validation';
import { duplicate, forbidden, goJSON, invalid, OMIT, paths, required } from '../causes.js';
import { isPlainObject, type RuleProgram, type SchemaNode } from '../node.js';
import { COST_LIMIT_EXCEEDED, CostMeter, PER_CALL_LIMIT, withMeter } from './cost.js';
import { celOptional } from './library.js';
import { toCel, type ConversionCache } from './values.js';

const MAX_MESSAGE_BYTES = 5 * 1024;
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';
const MESSAGE_OUT_OF_BUDGET = 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run';

/** Upstream's report of a rule (or messageExpression) that passed a cost limit; validation stops there. */
function costExceeded(meter: CostMeter, program: RuleProgram, inMessage: boolean): string {
  if (meter.exceeded === 'budget') return inMessage ? MESSAGE_OUT_OF_BUDGET : OUT_OF_BUDGET;
  return inMessage
    ? `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(program.rule.messageExpression ?? '')}`
    : `'${COST_LIMIT_EXCEEDED}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(program)}`;
}

/** The rule as errors name it: its message when it has one, else its expression. */
function ruleErrorString(program: RuleProgram): string {
  const message = program.rule.message?.trim();
  return message ? message : program.rule.rule.trim();
}

/** cel-go's wording for the runtime errors both evaluators know. */
export function celGoError(message: string): string {
  if (message.startsWith('found no matching overload') || message.startsWith('unbound function')) return 'no such overload';
  const missing = /^field not found: (.*)$/.exec(message);
  if (missing) return `no such key: ${missing[1]}`;
  if (message.endsWith('divide by zero')) return 'division by zero';
  if (message.endsWith('modulus by zero')) return 'modulus by zero';
  return message;
}

function causeForReason(program: RuleProgram, field: string, value: unknown, detail: string): StatusCause {
  switch (program.rule.reason) {
    case CAUSE_TYPE.forbidden:
      return forbidden(field, detail);
    case CAUSE_TYPE.required:
      return required(field, detail);
    case CAUSE_TYPE.duplicate:
      return duplicate(field, value);
    default:
      return invalid(field, value, detail);
  }
}

/** Items of an old list-type=map list, found by the key fields of a new item. */
function oldItemsByKey(node: SchemaNode, old: unknown): ((item: unknown) => unknown) | undefined {
  if (node.listType !== 'map' || !Array.isArray(old)) return undefined;
  const keyOf = (item: unknown) => (isPlainObject(item) ? goJSON(node.listMapKeys.map((k) => item[k] ?? null)) : undefined);
  const byKey = new Map<string, unknown>();
  for (const item of old) {
    const key = keyOf(item);
    if (key !== undefined && !byKey.has(key)) byKey.set(key, item);
  }
  return (item) => {
    const key = keyOf(item);
    return key === undefined ? undefined : byKey.get(key);
  };
}

class RuleValidator {
  readonly out: StatusCause[] = [];
  private stopped = false;
  private readonly cache: ConversionCache = new WeakMap();
  private readonly oldCache: ConversionCache = new WeakMap();

  constructor(
    private readonly meter: CostMeter,
    private readonly rootIsResource: boolean,
  ) {}

  visit(node: SchemaNode, value: unknown, old: unknown, path: string | undefined, isRoot: boolean): void {
    if (this.stopped || !node.rulesBelow || value === null || value === undefined) return;
    if (node.rules.length > 0) this.evaluate(node, value, old, path, isRoot && this.rootIsResource);
    if (this.stopped) return;
    if (Array.isArray(value)) {
      const items = node.items;
      if (!items) return;
      const oldItem = oldItemsByKey(node, old);
      value.forEach((item, i) => this.visit(items, item, oldItem?.(item), paths.index(path, i), false));
    } else if (isPlainObject(value)) {
      const oldObject = isPlainObject(old) ? old : undefined;
      if (typeof node.additional === 'object') {
        for (const key of Object.keys(value)) {
          if (!node.properties?.has(key)) this.visit(node.additional, value[key], oldObject?.[key], paths.key(path, key), false);
        }
      }
      if (node.properties) {
        for (const key of Object.keys(value)) {
          const sub = node.properties.get(key);
          if (sub) this.visit(sub, value[key], oldObject?.[key], paths.child(path, key), false);
        }
      }
    }
  }

  private evaluate(node: SchemaNode, value: unknown, old: unknown, path: string | undefined, isResourceRoot: boolean): void {
    const field = paths.field(path);
    const type = isResourceRoot ? 'object' : node.type;
    const self = toCel(value, node, this.cache);
    const hasOld = old !== null && old !== undefined;
    const oldSelf = hasOld ? toCel(old, node, this.oldCache) : undefined;
    for (const program of node.rules) {
      if (program.error) {
        this.out.push(invalid(field, type, `rule compile error: ${program.error}`));
        continue;
      }
      if (!program.evaluate) continue;
      const optional = program.rule.optionalOldSelf === true;
      if (program.usesOldSelf && !hasOld && !optional) continue;
      const bindings: Record<string, unknown> = { self };
      if (optional) bindings.oldSelf = celOptional(oldSelf as never);
      else if (hasOld) bindings.oldSelf = oldSelf;
      const result = withMeter(this.meter, () => program.evaluate!(bindings));
      if (this.meter.exceeded) {
        this.out.push(invalid(field, type, costExceeded(this.meter, program, false)));
        this.stopped = true;
        return;
      }
      if (isCelError(result)) {
        const message = celGoError(result.message);
        this.out.push(
          invalid(
            field,
            type,
            message === 'no such overload'
              ? `'${message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(program)}`
              : `${message} evaluating rule: ${ruleErrorString(program)}`,
          ),
        );
        continue;
      }
      if (result === true) continue;
      const detail = this.message(program, bindings) ?? (program.rule.message?.trim() || `failed rule: ${ruleErrorString(program)}`);
      if (this.stopped) {
        this.out.push(invalid(field, type, detail));
        return;
      }
      const errorField = program.fieldPath ? paths.child(path, program.fieldPath) : field;
      const badValue = type === 'object' || type === 'array' ? OMIT : value;
      this.out.push(causeForReason(program, errorField, badValue, detail));
    }
  }

  /** The rule's messageExpression evaluated, or undefined to fall back to its message. */
  private message(program: RuleProgram, bindings: Record<string, unknown>): string | undefined {
    if (!program.message) return undefined;
    const result = withMeter(this.meter, () => program.message!(bindings));
    if (this.meter.exceeded) {
      this.stopped = true;
      return costExceeded(this.meter, program, true);
    }
    if (typeof result !== 'string') return undefined;
    const text = result.trim();
    if (text === '' || text.includes('\n') || Buffer.byteLength(text) > MAX_MESSAGE_BYTES) return undefined;
    return text;
  }
}

/**
 * Runs the CEL rules of `root` over a custom resource (or, with `base`, over a value at that path, as when
 * checking a default). `old` is the stored object on update. All the rules together may spend `budget` (a
 * meter when several validations share one), one evaluation `perCallLimit`; past either, validation stops
 * with upstream's error.
 */
export function validateRules(
  root: SchemaNode,
  value: unknown,
  old: unknown,
  budget: number | CostMeter,
  options: { base?: string; resourceRoot?: boolean; perCallLimit?: number } = {},
): StatusCause[] {
  if (!root.rulesBelow) return [];
  const meter = budget instanceof CostMeter ? budget : new CostMeter(budget, options.perCallLimit ?? PER_CALL_LIMIT);
  if (meter.exceeded) return [];
  const validator = new RuleValidator(meter, options.resourceRoot ?? true);
  validator.visit(root, value, old, options.base, true);
  return validator.out;
}
