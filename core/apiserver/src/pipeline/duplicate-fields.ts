// Duplicate fields in a request body (`{"replicas":1,"replicas":2}`): JSON.parse and the YAML parser keep the
// last one silently; Kubernetes' strict decoding names each repeated field, as an error (Strict) or a warning
// (Warn). Go's JSON decoder names the field by its path (`duplicate field "spec.replicas"`); its YAML decoder
// by the line of the repeated key's value (`line 9: key "foo" already set in map`), so both are kept.
import { isMap, isNode, isScalar, isSeq, type LineCounter, type Node } from 'yaml';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** One repeated field of a body. */
export interface RepeatedField {
  /** Its path as Go's strict JSON decoding names it: `spec.replicas`, `spec.containers[0].name`. */
  path: string;
  /** Its key as Go's YAML decoder prints it (`%#v`): `"foo"`, `1`, `true`. */
  key: string;
  /** The line (from 1) where the repeated key's value starts. */
  line: number;
}

/** The repeated fields of a body, and which of Go's decoders Kubernetes reads that body with. */
export interface RepeatedFields {
  decoder: 'json' | 'yaml';
  fields: RepeatedField[];
}

interface Frame {
  path: string;
  /** Objects: the keys seen so far and the key whose value comes next. */
  keys?: Set<string>;
  key?: string;
  /** Arrays: the index of the current item. */
  index: number;
}

const joinPath = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** The fields repeated within one JSON object, in order of their second appearance. One linear scan, no recursion. */
export function duplicateJsonFields(text: string): RepeatedField[] {
  const out: RepeatedField[] = [];
  const stack: Frame[] = [];
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i + 1;
      let escaped = false;
      for (i = start; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) {
          escaped = true;
          i++;
        } else if (d === QUOTE) break;
      }
      const frame = stack[stack.length - 1];
      if (!frame?.keys) continue;
      let j = i + 1;
      let valueLine = line;
      while (j < text.length && text.charCodeAt(j) <= 0x20) if (text.charCodeAt(j++) === NEWLINE) valueLine++;
      if (text.charCodeAt(j) !== COLON) continue;
      for (j++; j < text.length && text.charCodeAt(j) <= 0x20; j++) if (text.charCodeAt(j) === NEWLINE) valueLine++;
      const raw = text.slice(start, i);
      const key = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
      if (frame.keys.has(key)) out.push({ path: joinPath(frame.path, key), key: JSON.stringify(key), line: valueLine });
      else frame.keys.add(key);
      frame.key = key;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      const parent = stack[stack.length - 1];
      const path = !parent ? '' : parent.keys ? joinPath(parent.path, parent.key ?? '') : `${parent.path}[${parent.index}]`;
      stack.push(c === OPEN_BRACE ? { path, keys: new Set(), index: 0 } : { path, index: 0 });
    } else if (c === COMMA) {
      const frame = stack[stack.length - 1];
      if (frame && !frame.keys) frame.index++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) stack.pop();
    else if (c === NEWLINE) line++;
  }
  return out;
}

/** Go's `%#v` of a YAML key: strings quoted, numbers and booleans as they are. */
function goKey(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || value === undefined) return '<nil>';
  return String(value);
}

/**
 * The keys repeated within one YAML mapping, in the order Go's YAML decoder reports them: pair by pair, the
 * value's own repeats before its key's; each with the line of the repeated key's value.
 */
export function duplicateYamlKeys(root: unknown, lines: LineCounter): RepeatedField[] {
  const out: RepeatedField[] = [];
  // Walked without recursion: a repeat is queued right after its value, so it is reported once the value's are.
  const pending: ({ node: unknown; path: string } | RepeatedField)[] = [{ node: root, path: '' }];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if ('line' in next) {
      out.push(next);
      continue;
    }
    const { node, path } = next;
    const queued: typeof pending = [];
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const keyValue: unknown = isScalar(pair.key) ? pair.key.value : isNode(pair.key) ? pair.key.toJSON() : pair.key;
        const name = String(keyValue);
        const childPath = joinPath(path, name);
        queued.push({ node: pair.value, path: childPath });
        if (seen.has(name)) queued.push({ path: childPath, key: goKey(keyValue), line: lineOf(pair.value, pair.key, lines) });
        seen.add(name);
      }
    } else if (isSeq(node)) node.items.forEach((item, i) => queued.push({ node: item, path: `${path}[${i}]` }));
    for (let i = queued.length - 1; i >= 0; i--) pending.push(queued[i]!);
  }
  return out;
}

function lineOf(value: unknown, key: unknown, lines: LineCounter): number {
  const node = (isNode(value) && value.range ? value : isNode(key) ? key : undefined) as Node | undefined;
  return node?.range ? lines.linePos(node.range[0]).line : 1;
}

const YAML_ERRORS_PREFIX = 'yaml: unmarshal errors:\n  ';

/** The repeats as Go's YAML decoder reports them: one error, a line per repeated key. */
export function yamlDuplicatesError(fields: readonly RepeatedField[]): string {
  return YAML_ERRORS_PREFIX + fields.map((field) => `line ${field.line}: key ${field.key} already set in map`).join('\n  ');
}

/**
 * The strict decoding errors of a body's repeats: Go's JSON decoder names each repeated path once; its YAML
 * decoder reports all repeats as one error.
 */
export function duplicateFieldErrors(repeated: RepeatedFields | undefined): string[] {
  if (!repeated || repeated.fields.length === 0) return [];
  if (repeated.decoder === 'yaml') return [yamlDuplicatesError(repeated.fields)];
  return [...new Set(repeated.fields.map((field) => `duplicate field "${field.path}"`))];
}

/** The warnings of strict decoding errors with fieldValidation=Warn: a YAML decoder's error gives one per line. */
export function strictWarnings(errors: readonly string[]): string[] {
  return errors.flatMap((error) =>
    error.startsWith(YAML_ERRORS_PREFIX)
      ? error
          .slice(YAML_ERRORS_PREFIX.length)
          .split('\n')
          .map((line) => line.trim())
      : [error],
  );
}
