// The simple JSON paths kinds use for table columns and scale subresources (`.spec.replicas`,
// `.status.conditions[0].type`, `.metadata.labels['app']`, `.spec.containers[*].image`), as CRDs write them.
import { errors } from '../errors.js';

type Step = { key: string } | { index: number } | { all: true };

const cache = new Map<string, Step[]>();

/** Parses a path; throws a 400 naming the path when it is not of the simple form. */
export function parseJsonPath(path: string): Step[] {
  const cached = cache.get(path);
  if (cached) return cached;
  const text = path.startsWith('{') && path.endsWith('}') ? path.slice(1, -1) : path;
  const steps: Step[] = [];
  let i = 0;
  const fail = (): never => {
    throw errors.badRequest(`unsupported JSON path ${JSON.stringify(path)}: use .field, [index], ['key'] or [*]`);
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
      const index = /^\[(\d+)\]/.exec(rest);
      if (quoted) {
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
        if (value && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, step.key))
          next.push((value as Record<string, unknown>)[step.key]);
      } else if ('index' in step) {
        if (Array.isArray(value) && step.index < value.length) next.push(value[step.index]);
      } else if (Array.isArray(value)) next.push(...value);
    }
    current = next;
  }
  return current.filter((value) => value !== undefined);
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
      if (!next || typeof next !== 'object' || Array.isArray(next)) current[step.key] = {};
      current = current[step.key] as Record<string, unknown>;
    }
  });
}
