// The JSON paths kinds use for table columns and scale subresources (`.spec.replicas`,
// `.status.conditions[0].type`, `.metadata.labels['app']`, `.spec.containers[*].image`,
// `.status.conditions[?(@.type=="Ready")].status`), as CRDs write them.
import { errors } from '../errors.js';
import { isJsonObject } from '../guards.js';

const COMPARISONS = ['==', '!=', '<', '<=', '>', '>='] as const;
type Comparison = (typeof COMPARISONS)[number];
/** `[?(@.type=="Ready")]`: the items whose value at `path` compares so with `literal` (or, without one, exists). */
type Filter = { filter: { path: Step[]; op?: Comparison; literal?: unknown } };
type Step = { key: string } | { index: number } | { all: true } | Filter;

const FILTER =
  /^\[\?\(@((?:\.[A-Za-z0-9_$-]+|\[(?:'[^']*'|"[^"]*")\])*)\s*(?:(==|!=|<=|>=|<|>)\s*('(?:[^']*)'|"(?:[^"]*)"|-?\d+(?:\.\d+)?|true|false|null))?\s*\)\]/;

const cache = new Map<string, Step[]>();

/** Parses a path; throws a 400 naming the path when it is not of the simple form. */
export function parseJsonPath(path: string): Step[] {
  const cached = cache.get(path);
  if (cached) return cached;
  const text = path.startsWith('{') && path.endsWith('}') ? path.slice(1, -1) : path;
  const steps: Step[] = [];
  let i = 0;
  const fail = (): never => {
    throw errors.badRequest(`unsupported JSON path ${JSON.stringify(path)}: use .field, [index], ['key'], [*] or [?(@.field=="value")]`);
  };
  if (text[0] !== '.' && text[0] !== '[') fail();
  while (i < text.length) {
    if (text[i] === '.') {
      const match = /^\.([A-Za-z0-9_$-]+)/.exec(text.slice(i));
      if (!match) fail();
      steps.push({ key: match![1] });
      i += match![0].length;
    } else if (text[i] === '[') {
      const rest = text.slice(i);
      const quoted = /^\[(['"])(.*?)\1\]/.exec(rest);
      const index = /^\[(-?\d+)\]/.exec(rest);
      const filter = FILTER.exec(rest);
      if (filter) {
        const [, inner, op, literal] = filter;
        // FILTER captures no other operator.
        const comparison = COMPARISONS.find((known) => known === op);
        steps.push({ filter: { path: inner ? parseJsonPath(inner) : [], ...(comparison ? { op: comparison, literal: parseLiteral(literal!) } : {}) } });
        i += filter[0].length;
      } else if (quoted) {
        steps.push({ key: quoted[2] });
        i += quoted[0].length;
      } else if (index) {
        steps.push({ index: Number(index[1]) });
        i += index[0].length;
      } else if (rest.startsWith('[*]')) {
        steps.push({ all: true });
        i += 3;
      } else fail();
    } else fail();
  }
  cache.set(path, steps);
  return steps;
}

/** Every value the path reaches (several through `[*]`); none when a step is missing. */
export function readJsonPath(object: unknown, path: string): unknown[] {
  let current: unknown[] = [object];
  for (const step of parseJsonPath(path)) {
    const next: unknown[] = [];
    for (const value of current) {
      if ('key' in step) {
        if (isJsonObject(value) && Object.hasOwn(value, step.key)) next.push(value[step.key]);
      } else if ('index' in step) {
        if (!Array.isArray(value)) continue;
        const at = step.index < 0 ? value.length + step.index : step.index;
        if (at >= 0 && at < value.length) next.push(value[at]);
      } else if ('filter' in step) {
        if (Array.isArray(value)) next.push(...value.filter((item) => matches(item, step.filter)));
      } else if (Array.isArray(value)) next.push(...value);
    }
    current = next;
  }
  return current.filter((value) => value !== undefined);
}

function parseLiteral(text: string): unknown {
  if (text.startsWith("'") || text.startsWith('"')) return text.slice(1, -1);
  return JSON.parse(text);
}

function readSteps(object: unknown, steps: Step[]): unknown {
  let value = object;
  for (const step of steps) {
    if (!('key' in step) || !isJsonObject(value)) return undefined;
    value = value[step.key];
  }
  return value;
}

/** Whether one list item passes a filter step; values of different types never compare. */
function matches(item: unknown, filter: Filter['filter']): boolean {
  const value = readSteps(item, filter.path);
  if (filter.op === undefined) return value !== undefined && value !== null && value !== false;
  const literal = filter.literal;
  switch (filter.op) {
    case '==':
      return value === literal;
    case '!=':
      return value !== literal;
    default: {
      if (typeof value !== typeof literal || (typeof value !== 'number' && typeof value !== 'string')) return false;
      const [a, b] = [value as number | string, literal as number | string];
      return filter.op === '<' ? a < b : filter.op === '<=' ? a <= b : filter.op === '>' ? a > b : a >= b;
    }
  }
}

/** Sets the value at a path of `.a.b` steps, creating objects on the way. */
export function writeJsonPath(object: Record<string, unknown>, path: string, value: unknown): void {
  const steps = parseJsonPath(path);
  let current: Record<string, unknown> = object;
  steps.forEach((step, i) => {
    if (!('key' in step)) throw errors.badRequest(`cannot write through ${JSON.stringify(path)}: only .field steps can be written`);
    if (i === steps.length - 1) current[step.key] = value;
    else {
      const next = current[step.key];
      if (isJsonObject(next)) current = next;
      else {
        const created: Record<string, unknown> = {};
        current[step.key] = created;
        current = created;
      }
    }
  });
}
