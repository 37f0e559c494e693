// checkSchema: what the API server requires of a CRD version's openAPIV3Schema before it accepts the CRD —
// a structural schema, defaults that are pruned and valid, the keywords and extensions it supports, and CEL
// rules that compile. Causes are named from `path` (…openAPIV3Schema) the way upstream names them.
import type { StatusCause, ValidationRule } from '@skiff/api';
import { forbidden, goJSON, invalid, notSupported, Printed, required } from './causes.js';
import { CostMeter } from './cel/cost.js';
import { validateRules } from './cel/validate.js';
import { attachRules } from './compile.js';
import { checkRuleCosts } from './costs.js';
import { compileNode, copyJSON, jsonEqual, type SchemaNode } from './node.js';
import { validateOpenAPI } from './openapi.js';
import { pruneValue } from './prune.js';
import { forEachPattern, patternLimitCause } from './patterns.js';
import { regexError } from './regex.js';
import { DEFAULT_CEL_BUDGET, DEFAULT_CEL_CALL_LIMIT, type JSONSchemaProps } from './types.js';

type Level = 'root' | 'item' | 'field';

const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);
const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const RULE_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const NEWLINES = /[\n\r]/;

const at = (path: string, ...names: string[]) => names.reduce((p, n) => `${p}.${n}`, path);
const keyed = (path: string, key: string) => `${path}[${key}]`;
const indexed = (path: string, i: number) => `${path}[${i}]`;

const itemSchema = (s: JSONSchemaProps) => (s.items && !Array.isArray(s.items) ? s.items : undefined);
const nonEmpty = (value: unknown) =>
  value !== undefined &&
  value !== null &&
  value !== false &&
  value !== '' &&
  !(Array.isArray(value) && value.length === 0) &&
  !(typeof value === 'object' && !Array.isArray(value) && Object.keys(value as object).length === 0);

/** The exact `anyOf: [{type: integer}, {type: string}]` int-or-string schemas may carry. */
function isIntOrStringAnyOf(list: readonly JSONSchemaProps[] | undefined): boolean {
  return list?.length === 2 && jsonEqual(list[0], { type: 'integer' }) && jsonEqual(list[1], { type: 'string' });
}

// ---- structural schema -------------------------------------------------------------------------------

function checkValueValidation(s: JSONSchemaProps, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, path: string, out: StatusCause[]): void {
  if (!skipAnyOf) s.anyOf?.forEach((v, i) => checkNested(v, false, indexed(at(path, 'anyOf'), i), out));
  s.allOf?.forEach((v, i) => checkNested(v, skipFirstAllOfAnyOf && i === 0, indexed(at(path, 'allOf'), i), out));
  s.oneOf?.forEach((v, i) => checkNested(v, false, indexed(at(path, 'oneOf'), i), out));
  if (s.not) checkNested(s.not, false, at(path, 'not'), out);
}

/** A schema under allOf/anyOf/oneOf/not may only validate: it may not give types, defaults or extensions. */
function checkNested(v: JSONSchemaProps, skipAnyOf: boolean, path: string, out: StatusCause[]): void {
  checkValueValidation(v, skipAnyOf, false, path, out);
  const items = itemSchema(v);
  if (items) checkNested(items, false, at(path, 'items'), out);
  for (const [k, p] of Object.entries(v.properties ?? {})) checkNested(p, false, keyed(at(path, 'properties'), k), out);
  if (v.type) out.push(forbidden(at(path, 'type'), 'must be empty to be structural'));
  if (v.additionalProperties !== undefined) out.push(forbidden(at(path, 'additionalProperties'), 'must be undefined to be structural'));
  if (v.default !== undefined) out.push(forbidden(at(path, 'default'), 'must be undefined to be structural'));
  if (v.title) out.push(forbidden(at(path, 'title'), 'must be empty to be structural'));
  if (v.description) out.push(forbidden(at(path, 'description'), 'must be empty to be structural'));
  if (v.nullable) out.push(forbidden(at(path, 'nullable'), 'must be false to be structural'));
  for (const ext of ['x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string'] as const) {
    if (v[ext]) out.push(forbidden(at(path, ext), 'must be false to be structural'));
  }
  if (v['x-kubernetes-list-map-keys']?.length) out.push(forbidden(at(path, 'x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  if (v['x-kubernetes-list-type'] !== undefined) out.push(forbidden(at(path, 'x-kubernetes-list-type'), 'must be undefined to be structural'));
  if (v['x-kubernetes-map-type'] !== undefined) out.push(forbidden(at(path, 'x-kubernetes-map-type'), 'must be undefined to be structural'));
  if (v['x-kubernetes-validations']?.length) out.push(forbidden(at(path, 'x-kubernetes-validations'), 'must be empty to be structural'));
  if (v.properties?.metadata) out.push(forbidden(keyed(at(path, 'properties'), 'metadata'), 'must not be specified in a nested context'));
}

const ROOT_METADATA_ALLOWED = new Set(['type', 'default', 'properties']);

function checkMetadata(s: JSONSchemaProps, strict: boolean, level: Level, path: string, out: StatusCause[]): void {
  if (strict && s.type !== 'object') out.push(invalid(at(path, 'type'), s.type ?? '', 'must be object'));
  if (level !== 'root') return;
  const names = Object.keys(s.properties ?? {});
  const onlyNames = names.every((n) => n === 'name' || n === 'generateName');
  const extra = Object.entries(s).some(([k, v]) => !ROOT_METADATA_ALLOWED.has(k) && nonEmpty(v));
  if (extra || !onlyNames) {
    out.push(forbidden(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
}

const TYPE_REQUIRED: Record<Level, string> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

function checkStructure(s: JSONSchemaProps, level: Level, path: string, out: StatusCause[]): void {
  const items = itemSchema(s);
  if (s.type === 'array' && !s.items) out.push(required(at(path, 'items'), 'must be specified'));
  if (items) checkStructure(items, 'item', at(path, 'items'), out);
  for (const [k, p] of Object.entries(s.properties ?? {})) checkStructure(p, 'field', keyed(at(path, 'properties'), k), out);
  if (s.additionalProperties !== undefined) {
    if (level === 'root') out.push(forbidden(at(path, 'additionalProperties'), 'must not be used at the root'));
    if (typeof s.additionalProperties === 'object') checkStructure(s.additionalProperties, 'field', at(path, 'additionalProperties'), out);
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve) {
    out.push(invalid(at(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  if (intOrString && embedded) out.push(invalid(at(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
  const skipFirstAllOfAnyOf = isIntOrStringAnyOf(s.allOf?.[0]?.anyOf);
  checkValueValidation(s, isIntOrStringAnyOf(s.anyOf), skipFirstAllOfAnyOf, path, out);

  const strictMeta = level === 'root' || embedded;
  if (embedded && s.type !== 'object') {
    const detail = 'must be object if x-kubernetes-embedded-resource is true';
    out.push(s.type ? invalid(at(path, 'type'), s.type, detail) : required(at(path, 'type'), detail));
  } else if (!s.type && !intOrString && !preserve) {
    out.push(required(at(path, 'type'), TYPE_REQUIRED[level]));
  }
  if (embedded && s.additionalProperties !== undefined) {
    out.push(forbidden(at(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (level === 'root' && s.type && s.type !== 'object') out.push(invalid(at(path, 'type'), s.type, 'must be object at the root'));
  for (const name of ['kind', 'apiVersion']) {
    const p = s.properties?.[name];
    if (p && strictMeta && p.type !== 'string') out.push(invalid(at(keyed(at(path, 'properties'), name), 'type'), p.type ?? '', 'must be string'));
  }
  if (s.properties?.metadata) checkMetadata(s.properties.metadata, strictMeta, level, keyed(at(path, 'properties'), 'metadata'), out);
  if (embedded && !preserve && Object.keys(s.properties ?? {}).length === 0) {
    out.push(required(at(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
}

/** Every field a value validation (allOf/anyOf/oneOf/not) names must also be in the structural schema. */
function checkCompleteness(v: JSONSchemaProps, s: JSONSchemaProps | undefined, sPath: string, vPath: string, nested: boolean, out: StatusCause[]): void {
  if (!s) {
    out.push(required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  if (v.not) checkCompleteness(v.not, s, sPath, at(vPath, 'not'), true, out);
  for (const junctor of ['allOf', 'anyOf', 'oneOf'] as const) {
    v[junctor]?.forEach((sub, i) => checkCompleteness(sub, s, sPath, indexed(at(vPath, junctor), i), true, out));
  }
  if (!nested) return;
  const vItems = itemSchema(v);
  if (vItems) checkCompleteness(vItems, itemSchema(s), at(sPath, 'items'), at(vPath, 'items'), true, out);
  for (const [k, sub] of Object.entries(v.properties ?? {})) {
    const sProp = s.properties?.[k];
    if (!sProp) out.push(required(keyed(at(sPath, 'properties'), k), `because it is defined in ${keyed(at(vPath, 'properties'), k)}`));
    else checkCompleteness(sub, sProp, keyed(at(sPath, 'properties'), k), keyed(at(vPath, 'properties'), k), true, out);
  }
}

/** The structural schema's causes, with `more` (the patterns'), in upstream's order. */
function checkStructural(schema: JSONSchemaProps, path: string, more: StatusCause[]): StatusCause[] {
  const out: StatusCause[] = [...more];
  checkStructure(schema, 'root', path, out);
  checkCompleteness(schema, schema, path, path, false, out);
  const text = (c: StatusCause) => `${c.field}: ${c.message}`;
  return out.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

/**
 * Patterns must be valid RE2 and within the compile limits of patterns.ts. One over them is never compiled
 * here, nor is any when `compile` is false; `skipDefaults` is then set, as validating defaults would compile them.
 */
function checkPatterns(schema: JSONSchemaProps, path: string, options: CheckOptions): { causes: StatusCause[]; skipDefaults: boolean } {
  const causes: StatusCause[] = [];
  let skipDefaults = options.compilePatterns === false;
  forEachPattern(schema, path, (pattern, field) => {
    const over = patternLimitCause(pattern, field);
    if (over) {
      skipDefaults = true;
      if (options.patternLimits !== false) causes.push(over);
    } else if (options.compilePatterns !== false) {
      const err = regexError(pattern);
      if (err) causes.push(invalid(field, pattern, `must be a valid regular expression, but isn't: ${err}`));
    }
  });
  return { causes, skipDefaults };
}

// ---- defaults ----------------------------------------------------------------------------------------

/**
 * How defaults are checked against the CEL rules: all of a schema's defaults share one runtime budget, and
 * none runs rules when a rule is over its static budget (the CRD is refused for that anyway).
 */
interface DefaultRules {
  readonly meter?: CostMeter;
}

function checkDefaults(
  s: JSONSchemaProps,
  node: SchemaNode,
  path: string,
  insideMeta: boolean,
  isResourceRoot: boolean,
  rules: DefaultRules,
  out: StatusCause[],
): void {
  const embedded = isResourceRoot || node.embedded;
  if (node.embedded) insideMeta = false;
  if (s.default !== undefined && !insideMeta) {
    const defaultPath = at(path, 'default');
    const pruned = copyJSON(s.default);
    pruneValue(pruned, node, node.embedded);
    if (!jsonEqual(pruned, s.default)) out.push(invalid(defaultPath, s.default, 'must not have unknown fields'));
    const errs = validateOpenAPI(node, s.default, defaultPath);
    if (errs.length > 0) {
      out.push(...errs);
    } else if (rules.meter) {
      const options = { base: defaultPath, resourceRoot: embedded };
      const withOld = validateRules(node, s.default, s.default, rules.meter, options);
      out.push(...(withOld.length > 0 ? withOld : validateRules(node, s.default, undefined, rules.meter, options)));
    }
  }
  const items = itemSchema(s);
  if (items && node.items) checkDefaults(items, node.items, at(path, 'items'), insideMeta, false, rules, out);
  for (const [k, sub] of Object.entries(s.properties ?? {})) {
    const subInsideMeta = insideMeta || (embedded && META_FIELDS.has(k));
    checkDefaults(sub, node.properties!.get(k)!, keyed(at(path, 'properties'), k), subInsideMeta, false, rules, out);
  }
}

// ---- keywords, extensions and rules ------------------------------------------------------------------

interface Context {
  /** undefined: defaults allowed; otherwise why they are not ('' for no reason). */
  readonly forbidDefaults?: string;
  readonly insideResourceMeta: boolean;
  /** The list or map above which oldSelf cannot be correlated. */
  readonly uncorrelatable?: string;
}

interface Findings {
  schema: StatusCause[];
  cel: StatusCause[];
}

/** A ValidationRule marshalled as Go marshals the struct: fields in declaration order, empty ones left out. */
function printRule(rule: ValidationRule): Printed {
  const fields: [string, unknown][] = [['rule', rule.rule]];
  for (const key of ['message', 'messageExpression', 'reason', 'fieldPath'] as const) if (rule[key]) fields.push([key, rule[key]]);
  if (rule.optionalOldSelf !== undefined) fields.push(['optionalOldSelf', rule.optionalOldSelf]);
  return new Printed(`{${fields.map(([k, v]) => `${JSON.stringify(k)}:${goJSON(v)}`).join(',')}}`);
}

function checkKeywords(s: JSONSchemaProps, path: string, ctx: Context, out: StatusCause[]): void {
  if (s.type && !OPENAPI_TYPES.includes(s.type)) out.push(notSupported(at(path, 'type'), s.type, OPENAPI_TYPES));
  if (s.default !== undefined && ctx.forbidDefaults !== undefined) {
    out.push(forbidden(at(path, 'default'), ctx.forbidDefaults ? `must not be set ${ctx.forbidDefaults}` : 'must not be set'));
  }
  if (s.id) out.push(forbidden(at(path, 'id'), 'id is not supported'));
  if (s.additionalItems !== undefined) out.push(forbidden(at(path, 'additionalItems'), 'additionalItems is not supported'));
  if (nonEmpty(s.patternProperties)) out.push(forbidden(at(path, 'patternProperties'), 'patternProperties is not supported'));
  if (nonEmpty(s.definitions)) out.push(forbidden(at(path, 'definitions'), 'definitions is not supported'));
  if (s.dependencies !== undefined) out.push(forbidden(at(path, 'dependencies'), 'dependencies is not supported'));
  if (s.$ref !== undefined) out.push(forbidden(at(path, '$ref'), '$ref is not supported'));
  if (s.type === 'null') out.push(forbidden(at(path, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items) && s.items.length > 0) out.push(forbidden(at(path, 'items'), 'items must be a schema object and not an array'));
  if (ctx.insideResourceMeta && s['x-kubernetes-embedded-resource']) {
    out.push(forbidden(at(path, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
  }
}

function checkListAndMapTypes(s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  const listType = s['x-kubernetes-list-type'];
  const mapType = s['x-kubernetes-map-type'];
  const mapKeys = s['x-kubernetes-list-map-keys'] ?? [];
  const items = itemSchema(s);
  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    out.push(invalid(at(path, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  }
  if (mapType !== undefined && s.type !== 'object') {
    const detail = 'must be object if x-kubernetes-map-type is specified';
    out.push(s.type ? invalid(at(path, 'type'), s.type, detail) : required(at(path, 'type'), detail));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') {
    out.push(notSupported(at(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  }
  if (listType !== undefined && s.type !== 'array') {
    const detail = 'must be array if x-kubernetes-list-type is specified';
    out.push(s.type ? invalid(at(path, 'type'), s.type, detail) : required(at(path, 'type'), detail));
  } else if (listType === 'set' && items) {
    const detail = 'must be atomic as item of a list with x-kubernetes-list-type=set';
    const itemListType = items['x-kubernetes-list-type'];
    if (items.type === 'array' && itemListType !== undefined && itemListType !== 'atomic') {
      out.push(invalid(at(path, 'items', 'x-kubernetes-list-type'), itemListType, detail));
    } else if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      out.push(invalid(at(path, 'items', 'x-kubernetes-map-type'), itemListType ?? null, detail));
    }
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType)) {
    out.push(notSupported(at(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }
  if (mapKeys.length > 0) {
    const detail = 'must be map if x-kubernetes-list-map-keys is non-empty';
    if (listType === undefined) out.push(required(at(path, 'x-kubernetes-list-type'), detail));
    else if (listType !== 'map') out.push(invalid(at(path, 'x-kubernetes-list-type'), listType, detail));
  }
  if (listType === 'map') {
    if (mapKeys.length === 0) out.push(required(at(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    if (!s.items) out.push(required(at(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    if (Array.isArray(s.items)) out.push(invalid(at(path, 'items'), s.items, 'must only have a single schema if x-kubernetes-list-type is map'));
    if (items && items.type !== 'object') {
      out.push(invalid(at(path, 'items', 'type'), items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    }
    if (items?.type === 'object') {
      const seen = new Set<string>();
      for (const key of mapKeys) {
        const keySchema = items.properties?.[key];
        if (!keySchema) {
          out.push(invalid(at(path, 'x-kubernetes-list-map-keys'), mapKeys, 'entries must all be names of item properties'));
        } else if (keySchema.type === 'array' || keySchema.type === 'object') {
          out.push(
            invalid(
              at(keyed(at(path, 'items', 'properties'), key), 'type'),
              items.type,
              "must be a scalar type if parent array's x-kubernetes-list-type is map",
            ),
          );
        }
        if (seen.has(key)) out.push(invalid(at(path, 'x-kubernetes-list-map-keys'), mapKeys, 'must not contain duplicate entries'));
        seen.add(key);
      }
    }
  }
  if (items && (listType === 'set' || listType === 'map')) {
    if (items.nullable) out.push(forbidden(at(path, 'items', 'nullable'), `cannot be nullable when x-kubernetes-list-type is ${listType}`));
    if (listType === 'map') {
      for (const key of mapKeys) {
        const keySchema = items.properties?.[key];
        if (!keySchema) continue;
        const keyPath = keyed(at(path, 'items', 'properties'), key);
        if (!items.required?.includes(key) && keySchema.default === undefined) {
          out.push(required(at(keyPath, 'default'), 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
        }
        if (keySchema.nullable) out.push(forbidden(at(keyPath, 'nullable'), 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
      }
    }
  }
}

function checkRuleFields(s: JSONSchemaProps, node: SchemaNode | undefined, path: string, out: StatusCause[]): void {
  (s['x-kubernetes-validations'] ?? []).forEach((rule, i) => {
    const rulePath = indexed(at(path, 'x-kubernetes-validations'), i);
    const ruleText = (rule.rule ?? '').trim();
    const message = (rule.message ?? '').trim();
    if (!ruleText) out.push(required(at(rulePath, 'rule'), 'rule is not specified'));
    else if (rule.message && !message) out.push(invalid(at(rulePath, 'message'), rule.message, 'must be non-empty if specified'));
    else if (NEWLINES.test(message)) out.push(invalid(at(rulePath, 'message'), rule.message, 'must not contain line breaks'));
    else if (NEWLINES.test(ruleText) && !message) out.push(required(at(rulePath, 'message'), 'message must be specified if rule contains line breaks'));
    if (rule.messageExpression && !rule.messageExpression.trim()) {
      out.push(required(at(rulePath, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    }
    if (rule.reason !== undefined && !RULE_REASONS.includes(rule.reason)) out.push(notSupported(at(rulePath, 'reason'), rule.reason, RULE_REASONS));
    if (rule.fieldPath) {
      if (!rule.fieldPath.trim()) out.push(invalid(at(rulePath, 'fieldPath'), rule.fieldPath, 'must be non-empty if specified'));
      if (NEWLINES.test(rule.fieldPath)) out.push(invalid(at(rulePath, 'fieldPath'), rule.fieldPath, 'must not contain line breaks'));
      const program = node?.rules[i];
      if (node && program && rule.fieldPath.trim() && !program.fieldPath) out.push(invalid(at(rulePath, 'fieldPath'), rule.fieldPath, 'must be a valid path'));
    }
  });
}

function checkRulePrograms(s: JSONSchemaProps, node: SchemaNode, path: string, ctx: Context, out: StatusCause[]): void {
  const rules = s['x-kubernetes-validations'] ?? [];
  node.rules.forEach((program, i) => {
    const rule = rules[i]!;
    const rulePath = indexed(at(path, 'x-kubernetes-validations'), i);
    if (program.error) out.push(invalid(at(rulePath, 'rule'), printRule(rule), program.error));
    if (program.messageError) out.push(invalid(at(rulePath, 'messageExpression'), printRule(rule), program.messageError));
    if (program.usesOldSelf) {
      if (ctx.uncorrelatable !== undefined) {
        out.push(invalid(at(rulePath, 'rule'), rule.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${ctx.uncorrelatable}`));
      }
    } else if (rule.optionalOldSelf !== undefined) {
      out.push(invalid(at(rulePath, 'optionalOldSelf'), rule.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
    }
  });
}

const withForbiddenDefaults = (ctx: Context, reason: string): Context => ({ ...{}, ...ctx, forbidDefaults: reason });
const withUncorrelatable = (ctx: Context, path: string): Context => (ctx.uncorrelatable === undefined ? { ...{}, ...ctx, uncorrelatable: path } : ctx);

function checkOpenAPI(s: JSONSchemaProps, path: string, ctx: Context, isRoot: boolean, node: SchemaNode | undefined): Findings {
  const found: Findings = { schema: [], cel: [] };
  const merge = (sub: Findings) => {
    found.schema.push(...sub.schema);
    found.cel.push(...sub.cel);
  };
  checkKeywords(s, path, ctx, found.schema);
  if (s.uniqueItems) found.schema.push(forbidden(at(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const properties = s.properties ?? {};
  if (s.additionalProperties !== undefined) {
    if (Object.keys(properties).length > 0 && s.additionalProperties !== true) {
      found.schema.push(forbidden(at(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    }
    if (typeof s.additionalProperties === 'object') {
      const sub = ctx.insideResourceMeta ? withForbiddenDefaults(ctx, 'inside additionalProperties applying to object metadata') : ctx;
      const subNode = node && typeof node.additional === 'object' ? node.additional : undefined;
      merge(checkOpenAPI(s.additionalProperties, at(path, 'additionalProperties'), sub, false, subNode));
    }
  }
  const mapCorrelatable = s['x-kubernetes-map-type'] === undefined || ['granular', 'atomic'].includes(s['x-kubernetes-map-type']);
  for (const [name, property] of Object.entries(properties)) {
    let sub = mapCorrelatable ? ctx : withUncorrelatable(ctx, path);
    if ((isRoot || s['x-kubernetes-embedded-resource']) && META_FIELDS.has(name)) {
      sub = { ...{}, ...sub, insideResourceMeta: true };
      if (isRoot) sub = withForbiddenDefaults(sub, `in top-level ${name}`);
    }
    merge(checkOpenAPI(property, keyed(at(path, 'properties'), name), sub, false, node?.properties?.get(name)));
  }
  if (s.not) merge(checkOpenAPI(s.not, at(path, 'not'), ctx, false, undefined));
  for (const junctor of ['allOf', 'oneOf', 'anyOf'] as const) {
    s[junctor]?.forEach((sub, i) => merge(checkOpenAPI(sub, indexed(at(path, junctor), i), ctx, false, undefined)));
  }
  for (const [name, sub] of Object.entries(s.definitions ?? {})) merge(checkOpenAPI(sub, keyed(at(path, 'definitions'), name), ctx, false, undefined));
  if (s.items) {
    const sub = s['x-kubernetes-list-type'] === 'map' ? ctx : withUncorrelatable(ctx, path);
    if (Array.isArray(s.items)) s.items.forEach((item, i) => merge(checkOpenAPI(item, indexed(at(path, 'items'), i), sub, false, undefined)));
    else merge(checkOpenAPI(s.items, at(path, 'items'), sub, false, node?.items));
  }
  for (const [name, dep] of Object.entries(s.dependencies ?? {})) {
    if (!Array.isArray(dep)) merge(checkOpenAPI(dep, keyed(at(path, 'dependencies'), name), ctx, false, undefined));
  }
  checkListAndMapTypes(s, path, found.schema);
  if (s['x-kubernetes-validations']?.length) {
    checkRuleFields(s, node, path, found.schema);
    if (found.schema.length === 0 && node) checkRulePrograms(s, node, path, ctx, found.cel);
  }
  return found;
}

/** Options of {@link checkSchema}. */
export interface CheckOptions {
  /**
   * Whether the CEL rules are held to the static cost limits (default true). An update leaves a version
   * whose schema it does not change as it was stored, as upstream does, so CRDs stored before the limits
   * (or under other limits) can still be updated.
   */
  costs?: boolean;
  /**
   * Whether the patterns are held to the compile limits of patterns.ts (default true). Either way, a pattern
   * over them is not compiled while checking (nor are the defaults validated, which would compile it).
   */
  patternLimits?: boolean;
  /**
   * Whether patterns are compiled to check that they are valid RE2 (default true); false when the CRD's
   * patterns together are over the limits, so that checking does not take as long as compiling them all.
   */
  compilePatterns?: boolean;
}

/**
 * Checks one CRD version's openAPIV3Schema as the API server does on CRD create and update; `path` names
 * the schema (`spec.versions[0].schema.openAPIV3Schema`). Returns no causes for an acceptable schema.
 */
export function checkSchema(schema: JSONSchemaProps, path: string, options: CheckOptions = {}): StatusCause[] {
  const out: StatusCause[] = [];
  if (schema.nullable) out.push(forbidden(at(path, 'nullable'), 'nullable cannot be true at the root'));
  const patterns = checkPatterns(schema, path, options);
  let root: SchemaNode | undefined;
  let costs: StatusCause[] = [];
  const structural = checkStructural(schema, path, patterns.causes);
  if (structural.length > 0) {
    out.push(...structural);
  } else {
    root = compileNode(schema);
    attachRules(root, true);
    if (options.costs !== false) costs = checkRuleCosts(schema, root, path).causes;
    const defaults: StatusCause[] = [];
    const meter = costs.length === 0 ? new CostMeter(DEFAULT_CEL_BUDGET, DEFAULT_CEL_CALL_LIMIT) : undefined;
    if (!patterns.skipDefaults) checkDefaults(schema, root, path, false, true, { meter }, defaults);
    out.push(...defaults);
    if (defaults.length > 0) root = undefined;
  }
  const found = checkOpenAPI(schema, path, { insideResourceMeta: false }, true, root);
  out.push(...found.schema, ...found.cel);
  if (root && found.schema.length === 0) out.push(...costs);
  return out;
}
