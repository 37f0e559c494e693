// How a JSON body wrote its numbers, where JSON.parse loses it. Go's decoder refuses `1e3` or `1.0` for an
// integer field ("cannot unmarshal number 1e3 into Go struct field … of type int32") and quotes a number's
// own text in its errors; JSON.parse turns both into 1000 and 1, and rounds integers past 2^53. So the
// body's text is scanned once (linear, no recursion) for those literals, kept by their path in the object
// they end up in, for the decoder to look up where a field is an integer.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** A path segment standing for any index (a JSON patch appends with `-`). */
const ANY_INDEX = '*';

/** Integer literals this long may not survive as a double; their text is kept for exact messages. */
const LONG_INTEGER_DIGITS = 16;

interface Node {
  children?: Map<string, Node>;
  text?: string;
}

/** Number literals by the path of the value they became: object keys, and array indices as decimal strings. */
export class NumberLiterals {
  private readonly root: Node = {};
  private count = 0;

  /** How many literals are kept. */
  get size(): number {
    return this.count;
  }

  /** Keeps `text` as the literal of the value at `path`. */
  add(path: readonly string[], text: string): void {
    let node = this.root;
    for (const segment of path) {
      node.children ??= new Map();
      let child = node.children.get(segment);
      if (!child) node.children.set(segment, (child = {}));
      node = child;
    }
    if (node.text === undefined) this.count++;
    node.text = text;
  }

  /**
   * The text a number at `path` was written as, when it was not a plain integer literal; undefined
   * otherwise. `value` is what the field holds now: a literal is only reported for the value it wrote.
   */
  lookup(path: readonly (string | number)[], value: number): string | undefined {
    let node: Node | undefined = this.root;
    for (const segment of path) {
      const children: Map<string, Node> | undefined = node.children;
      if (!children) return undefined;
      node = children.get(String(segment)) ?? (typeof segment === 'number' ? children.get(ANY_INDEX) : undefined);
      if (!node) return undefined;
    }
    return node.text !== undefined && Number(node.text) === value ? node.text : undefined;
  }

  /** Every literal with its path, for re-rooting (a JSON patch's values land at the operations' paths). */
  entries(): [string[], string][] {
    const out: [string[], string][] = [];
    const pending: [Node, string[]][] = [[this.root, []]];
    while (pending.length > 0) {
      const [node, path] = pending.pop()!;
      if (node.text !== undefined) out.push([path, node.text]);
      for (const [segment, child] of node.children ?? []) pending.push([child, [...path, segment]]);
    }
    return out;
  }
}

/** A number Go reads differently from JSON.parse: with a fraction or an exponent, or an integer too long for a double. */
function isNotablyWritten(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < ZERO || c > NINE) {
      if (c !== MINUS || i > 0) return true;
    }
  }
  return text.length - (text.charCodeAt(0) === MINUS ? 1 : 0) >= LONG_INTEGER_DIGITS;
}

interface Frame {
  array: boolean;
  /** The current index of an array. */
  index: number;
  /** The current key of an object, as a slice of the text (decoded only when a literal needs its path). */
  keyStart: number;
  keyEnd: number;
  keyEscaped: boolean;
}

/**
 * The notable number literals of a JSON text that parsed: those with a fraction or an exponent and
 * integers of 16 digits or more. Undefined when there are none (the usual case).
 */
export function numberLiteralsOf(text: string): NumberLiterals | undefined {
  let literals: NumberLiterals | undefined;
  const stack: Frame[] = [];
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
      if (frame && !frame.array) {
        let j = i + 1;
        while (j < text.length && text.charCodeAt(j) <= 0x20) j++;
        if (text.charCodeAt(j) === COLON) {
          frame.keyStart = start;
          frame.keyEnd = i;
          frame.keyEscaped = escaped;
        }
      }
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      let end = i + 1;
      while (end < text.length && !isDelimiter(text.charCodeAt(end))) end++;
      const literal = text.slice(i, end);
      if (isNotablyWritten(literal)) (literals ??= new NumberLiterals()).add(pathOf(text, stack), literal);
      i = end - 1;
    } else if (c === OPEN_BRACE) stack.push({ array: false, index: 0, keyStart: 0, keyEnd: 0, keyEscaped: false });
    else if (c === OPEN_BRACKET) stack.push({ array: true, index: 0, keyStart: 0, keyEnd: 0, keyEscaped: false });
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) stack.pop();
    else if (c === COMMA) {
      const frame = stack[stack.length - 1];
      if (frame?.array) frame.index++;
    }
  }
  return literals;
}

/** Where a number token ends: whitespace or JSON punctuation. */
function isDelimiter(c: number): boolean {
  return c <= 0x20 || c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET;
}

function pathOf(text: string, stack: readonly Frame[]): string[] {
  return stack.map((frame) => {
    if (frame.array) return String(frame.index);
    const raw = text.slice(frame.keyStart, frame.keyEnd);
    return frame.keyEscaped ? (JSON.parse(`"${raw}"`) as string) : raw;
  });
}

/**
 * The literals of a JSON patch's values, moved to where its `add` and `replace` operations put them
 * (`/spec/template/spec/containers/-` appends, so its index matches any).
 */
export function jsonPatchNumberLiterals(literals: NumberLiterals, operations: unknown): NumberLiterals | undefined {
  if (!Array.isArray(operations)) return undefined;
  let moved: NumberLiterals | undefined;
  for (const [path, text] of literals.entries()) {
    const [index, field, ...rest] = path;
    if (field !== 'value') continue;
    const operation: unknown = operations[Number(index)];
    if (typeof operation !== 'object' || operation === null) continue;
    const { op, path: pointer } = operation as { op?: unknown; path?: unknown };
    if ((op !== 'add' && op !== 'replace') || typeof pointer !== 'string') continue;
    const target =
      pointer === ''
        ? []
        : pointer
            .slice(1)
            .split('/')
            .map((token) => (token === '-' ? ANY_INDEX : token.replaceAll('~1', '/').replaceAll('~0', '~')));
    (moved ??= new NumberLiterals()).add([...target, ...rest], text);
  }
  return moved;
}
