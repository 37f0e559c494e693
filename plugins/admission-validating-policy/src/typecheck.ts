// Type checking a policy against the kinds it matches, as upstream's policy status controller does: the fields
// an expression reads from `object`, `oldObject` and `params` are looked up in the schemas of the matched kinds
// (and of the paramKind); a field that does not exist is a warning in `status.typeChecking`, keyed by the
// expression. The policy is stored and enforced all the same — such an expression fails when it runs.
import { parse } from '@bufbuild/cel';
import type { ExpressionWarning, NamedRuleWithOperations, ResourceDefinition, ValidatingAdmissionPolicy } from '@skiff/api';
import type { Schema } from '@skiff/api/schema';

type Expr = ReturnType<typeof parse>['expr'];

/** Policies matching more kinds than this are not type checked (a wildcard rule matches most of the API). */
const MAX_KINDS_CHECKED = 10;

interface Typed {
  /** `apps/v1, Kind=Deployment`, as the warnings name a kind. */
  name: string;
  object?: Schema;
}

/** The select chain `root.a.b.c`: the root variable and each field with the id of its selection. */
function selectChain(expr: Expr): { root: string; fields: { field: string; id: bigint }[] } | undefined {
  const fields: { field: string; id: bigint }[] = [];
  let current: Expr | undefined = expr;
  while (current?.exprKind.case === 'selectExpr') {
    fields.unshift({ field: current.exprKind.value.field, id: current.id });
    current = current.exprKind.value.operand;
  }
  return current?.exprKind.case === 'identExpr' ? { root: current.exprKind.value.name, fields } : undefined;
}

/** What selecting `field` from a value of `schema` gives; a string says why it cannot be selected. */
function select(schema: Schema, field: string): Schema | string | undefined {
  switch (schema.kind) {
    case 'object':
      return schema.fields[field] ?? `undefined field '${field}'`;
    case 'map':
      return schema.values;
    case 'any':
      return undefined;
    case 'array':
      return `type 'list' does not support field selection`;
    default:
      return `type '${schema.kind}' does not support field selection`;
  }
}

function issue(source: string, offset: number, message: string): string {
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1);
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${source.split('\n')[line - 1] ?? ''}\n | ${'.'.repeat(column)}^`;
}

/** The problems of one expression with `roots` (variable → schema); expressions that do not parse have none here. */
export function fieldProblems(source: string, roots: Readonly<Record<string, Schema | undefined>>): string[] {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch {
    return [];
  }
  const positions = parsed.sourceInfo?.positions ?? {};
  const problems: string[] = [];
  const visit = (expr: Expr | undefined, shadowed: ReadonlySet<string>): void => {
    if (!expr) return;
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'selectExpr': {
        const chain = selectChain(expr);
        const rootSchema = chain && !shadowed.has(chain.root) ? roots[chain.root] : undefined;
        if (!chain || !rootSchema) return visit(kind.value.operand, shadowed);
        let schema: Schema | undefined = rootSchema;
        for (const { field, id } of chain.fields) {
          const next = select(schema, field);
          if (typeof next === 'string') {
            problems.push(issue(source, positions[id.toString()] ?? 0, next));
            return;
          }
          if (!next) return;
          schema = next;
        }
        return;
      }
      case 'callExpr':
        visit(kind.value.target, shadowed);
        for (const arg of kind.value.args) visit(arg, shadowed);
        return;
      case 'listExpr':
        for (const element of kind.value.elements) visit(element, shadowed);
        return;
      case 'structExpr':
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') visit(entry.keyKind.value, shadowed);
          visit(entry.value, shadowed);
        }
        return;
      case 'comprehensionExpr': {
        const c = kind.value;
        const inner = new Set([...shadowed, c.iterVar, c.accuVar, ...(c.iterVar2 ? [c.iterVar2] : [])]);
        visit(c.iterRange, shadowed);
        visit(c.accuInit, shadowed);
        visit(c.loopCondition, inner);
        visit(c.loopStep, inner);
        visit(c.result, inner);
        return;
      }
      default:
        return;
    }
  };
  visit(parsed.expr, new Set());
  return problems;
}

const anyOf = (patterns: readonly string[] | undefined, value: string) => (patterns ?? []).some((p) => p === '*' || p === value);

/** The served kinds a rule matches as objects (subresource patterns name other objects and are left out). */
function kindsMatched(rules: readonly NamedRuleWithOperations[], served: readonly ResourceDefinition[]): ResourceDefinition[] {
  return served.filter((d) =>
    rules.some(
      (rule) => anyOf(rule.apiGroups, d.group) && anyOf(rule.apiVersions, d.version) && (rule.resources ?? []).some((r) => r === '*' || r === d.resource),
    ),
  );
}

const kindName = (d: Pick<ResourceDefinition, 'group' | 'version' | 'kind'>) => `${d.group}/${d.version}, Kind=${d.kind}`;

/** The policy's expressions, with the field that holds each. */
function expressionsOf(policy: ValidatingAdmissionPolicy): { fieldRef: string; expression: string }[] {
  const spec = policy.spec ?? {};
  return [
    ...(spec.matchConditions ?? []).map((c, i) => ({ fieldRef: `spec.matchConditions[${i}].expression`, expression: c.expression })),
    ...(spec.variables ?? []).map((v, i) => ({ fieldRef: `spec.variables[${i}].expression`, expression: v.expression })),
    ...(spec.validations ?? []).flatMap((v, i) => [
      { fieldRef: `spec.validations[${i}].expression`, expression: v.expression },
      ...(v.messageExpression ? [{ fieldRef: `spec.validations[${i}].messageExpression`, expression: v.messageExpression }] : []),
    ]),
    ...(spec.auditAnnotations ?? []).map((a, i) => ({ fieldRef: `spec.auditAnnotations[${i}].valueExpression`, expression: a.valueExpression })),
  ];
}

/** The warnings of `status.typeChecking` for a policy, given the kinds the API server serves. */
export function typeCheck(policy: ValidatingAdmissionPolicy, served: readonly ResourceDefinition[]): ExpressionWarning[] {
  const matched = kindsMatched(policy.spec?.matchConstraints?.resourceRules ?? [], served);
  if (matched.length === 0 || matched.length > MAX_KINDS_CHECKED) return [];
  const paramKind = policy.spec?.paramKind;
  const paramDefinition = paramKind
    ? served.find((d) => `${d.group ? `${d.group}/` : ''}${d.version}` === paramKind.apiVersion && d.kind === paramKind.kind)
    : undefined;
  const kinds: Typed[] = matched.map((d) => ({ name: kindName(d), object: d.schema }));
  const warnings: ExpressionWarning[] = [];
  for (const { fieldRef, expression } of expressionsOf(policy)) {
    const found = kinds.flatMap((kind) => {
      const problems = fieldProblems(expression, { object: kind.object, oldObject: kind.object, params: paramDefinition?.schema });
      return problems.length ? [`${kind.name}: ${problems.join('\n')}`] : [];
    });
    if (found.length) warnings.push({ fieldRef, warning: found.join('\n') });
  }
  return warnings;
}
