import { errors, MAX_NESTING_DEPTH } from '@skiff/api';

/**
 * Checks a request body must pass before anything recursive touches it. Each one works without
 * recursion, so a body nested 100,000 levels deep costs one linear scan and a 400, never a stack
 * overflow or a parser that runs out of memory.
 */

const tooDeep = (where: string) =>
  errors.badRequest(`the request body nests objects or arrays more than ${MAX_NESTING_DEPTH} levels deep${where}; Skiff refuses deeper bodies`);

/** Matches a surrogate code unit that is not half of a pair (with the u flag, pairs are one code point). */
const LONE_SURROGATE = /\p{Surrogate}/u;
const isWellFormed = (text: string) => !LONE_SURROGATE.test(text);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text; invalid UTF-8 is refused rather than silently replaced. */
export function bodyText(body: Buffer | string): string {
  if (typeof body === 'string') return body;
  try {
    return utf8.decode(body);
  } catch {
    throw errors.badRequest('the request body is not valid UTF-8');
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Refuses JSON text that opens more than MAX_NESTING_DEPTH objects or arrays at once (strings skipped). */
export function assertJsonNesting(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_NESTING_DEPTH) throw tooDeep('');
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
}

const BLOCK_SCALAR = /(?:^|[\s:-])[|>][0-9+-]*\s*(?:#.*)?$/;
const SEQUENCE_ENTRIES = /^(?:[-?](?:\s+|$))+/;

/**
 * Refuses YAML whose nesting could pass MAX_NESTING_DEPTH, estimated from the text alone: block
 * indentation levels, compact `- - -` entries and flow brackets. The estimate never falls short of
 * the real depth for block and flow collections; aliases, which it cannot see, are measured after
 * parsing by `assertWellFormedValue`. The YAML parser recurses per level and, given thousands of
 * flow levels, exhausts memory while reporting the stack overflow, so this runs first.
 */
export function assertYamlNesting(text: string): void {
  const indents: number[] = [];
  let flowDepth = 0;
  let quote = 0;
  let blockScalarParent = -1;
  for (const line of text.split('\n')) {
    const indent = line.length - line.trimStart().length;
    const rest = line.slice(indent);
    if (blockScalarParent >= 0) {
      if (rest === '' || indent > blockScalarParent) continue;
      blockScalarParent = -1;
    }
    let base = 0;
    let start = 0;
    if (flowDepth === 0 && quote === 0) {
      if (rest === '' || rest.startsWith('#')) continue;
      while (indents.length && indents[indents.length - 1]! > indent) indents.pop();
      if (!indents.length || indents[indents.length - 1]! < indent) indents.push(indent);
      const entries = SEQUENCE_ENTRIES.exec(rest)?.[0] ?? '';
      base = indents.length + (entries.match(/[-?]/g)?.length ?? 0);
      if (base > MAX_NESTING_DEPTH) throw tooDeep('');
      if (BLOCK_SCALAR.test(rest)) {
        blockScalarParent = indent;
        continue;
      }
      // A flow collection starts only where a value starts: at the entry, or after "key: ".
      const value = rest.slice(entries.length);
      const colon = value.search(/:(\s|$)/);
      const valueStart = entries.length + (colon >= 0 && !/^["']/.test(value) ? colon + 1 : 0);
      const first = rest.slice(valueStart).trimStart()[0];
      if (first !== '[' && first !== '{') continue;
      start = indent + rest.indexOf(first, valueStart);
    } else {
      base = indents.length;
    }
    for (let i = start; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (quote) {
        if (quote === QUOTE && c === BACKSLASH) i++;
        else if (c === quote) quote = 0;
      } else if (c === QUOTE || c === 0x27) quote = c;
      else if (c === 0x23 && (i === 0 || line[i - 1] === ' ')) break;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (base + ++flowDepth > MAX_NESTING_DEPTH) throw tooDeep('');
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) flowDepth = Math.max(0, flowDepth - 1);
    }
  }
}

/**
 * Walks a decoded body once, without recursion: refuses nesting deeper than MAX_NESTING_DEPTH
 * (naming where), strings that are not well-formed Unicode (a lone surrogate from a `\ud800`
 * escape), which no client means to send and which would not survive storage unchanged, and numbers
 * beyond a double's range (`1e400`, YAML's `.inf` and `.nan`), which Go's decoders refuse too.
 */
export function assertWellFormedValue(value: unknown): void {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'string' && !isWellFormed(value)) throw illFormed(undefined);
    if (typeof value === 'number' && !Number.isFinite(value)) throw notFinite(undefined);
    return;
  }
  const pending: Visit[] = [{ value, depth: 1 }];
  while (pending.length) {
    const visit = pending.pop()!;
    if (visit.depth > MAX_NESTING_DEPTH) throw tooDeep(` (at ${pathOf(visit)})`);
    // Plain loops: Object.entries would allocate an array per property of every object in every body.
    if (Array.isArray(visit.value)) {
      const items = visit.value as unknown[];
      for (let key = 0; key < items.length; key++) checkChild(visit, key, items[key], pending);
    } else {
      const object = visit.value as Record<string, unknown>;
      for (const key in object) {
        if (!Object.hasOwn(object, key)) continue;
        if (!isWellFormed(key)) throw illFormed(visit);
        checkChild(visit, key, object[key], pending);
      }
    }
  }
}

function checkChild(visit: Visit, key: string | number, child: unknown, pending: Visit[]): void {
  if (typeof child === 'string') {
    if (!isWellFormed(child)) throw illFormed({ value: child, depth: visit.depth + 1, parent: visit, key });
  } else if (typeof child === 'number') {
    if (!Number.isFinite(child)) throw notFinite({ value: child, depth: visit.depth + 1, parent: visit, key });
  } else if (child !== null && typeof child === 'object') pending.push({ value: child, depth: visit.depth + 1, parent: visit, key });
}

/** A node met on the walk; its path is put together only for an error message. */
interface Visit {
  value: unknown;
  depth: number;
  parent?: Visit;
  key?: string | number;
}

function pathOf(visit: Visit): string {
  const keys: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) keys.push(at.key!);
  const path = keys.reverse().reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${key}` : key), '');
  return path.length > 120 ? `${path.slice(0, 120)}…` : path;
}

function illFormed(visit: Visit | undefined) {
  const where = visit?.parent ? ` at ${pathOf(visit)}` : '';
  return errors.badRequest(`the request body holds a string that is not valid Unicode (a lone surrogate)${where}`);
}

function notFinite(visit: Visit | undefined) {
  const where = visit?.parent ? ` at ${pathOf(visit)}` : '';
  return errors.badRequest(`the request body holds a number that is not finite or is beyond a float64's range${where}`);
}
