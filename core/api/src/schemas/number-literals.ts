// How a JSON body wrote its numbers, where JSON.parse loses it. Go's decoder refuses `1e3` or `1.0` for an
// integer field ("cannot unmarshal number 1e3 into Go struct field … of type int32") and quotes a number's
// own text in its errors; JSON.parse turns both into 1000 and 1, and rounds integers past 2^53.
//
// Two linear passes over the text, neither recursive: `scan` notes only the values of such literals (most
// bodies have none, and then that is all); when the type check meets an integer field holding one of those
// values, it asks `resolve` for the text at those fields' paths, which follows only the containers on the way
// to them. So a body stuffed with literals in places no integer field is costs one pass and a set.

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

/** Integer literals this long may not survive as a double; their text is kept for exact messages. */
const LONG_INTEGER_DIGITS = 16;

/** A path in the object the body became: object keys, and array indices as numbers. */
export type ValuePath = readonly (string | number)[];

/** The paths asked for, as a tree: a node per container on the way, `wanted` where a number is asked for. */
interface PathNode {
  children?: Map<string | number, PathNode>;
  /** The indices of the requests that ask for the number here. */
  wanted?: number[];
}

/** Where a number token ends: whitespace or JSON punctuation. */
function isDelimiter(c: number): boolean {
  return c <= 0x20 || c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET;
}

function literalEnd(text: string, start: number): number {
  let end = start + 1;
  while (end < text.length && !isDelimiter(text.charCodeAt(end))) end++;
  return end;
}

/** A number Go reads differently from JSON.parse: with a fraction or an exponent, or an integer too long for a double. */
function isNotablyWritten(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < ZERO || c > NINE) {
      if (c !== MINUS || i > start) return true;
    }
  }
  return end - start - (text.charCodeAt(start) === MINUS ? 1 : 0) >= LONG_INTEGER_DIGITS;
}

/** False for a plain fraction that is no integer (`0.5`: a digit past the point other than 0, no exponent), cheaply. */
function mayBeInteger(text: string, start: number, end: number): boolean {
  let fraction = false;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x65 || c === 0x45) return true;
    if (c === 0x2e) fraction = true;
    else if (fraction && c !== ZERO) return false;
  }
  return true;
}

/** The end of the string token opening at `start` (the index of its closing quote), and whether it has escapes. */
function stringEnd(text: string, start: number): { end: number; escaped: boolean } {
  let escaped = false;
  let i = start + 1;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      escaped = true;
      i++;
    } else if (c === QUOTE) break;
  }
  return { end: i, escaped };
}

function isKey(text: string, afterString: number): boolean {
  let j = afterString;
  while (j < text.length && text.charCodeAt(j) <= 0x20) j++;
  return text.charCodeAt(j) === COLON;
}

/** A JSON patch operation that writes a value: where it writes it, and where that value is in the patch. */
interface WritingOperation {
  index: number;
  tokens: string[];
}

/** A JSON body's number literals that an integer field could take but Go's decoder would not (`1e3`, `1.0`). */
export class NumberLiterals {
  private constructor(
    /** The JSON text the literals are in. */
    private readonly text: string,
    /** The values of its notable literals, as JSON.parse made them. */
    private readonly values: ReadonlySet<number>,
    /** For a JSON patch: the operations whose values land in the patched object, latest first. */
    private readonly operations?: readonly WritingOperation[],
  ) {}

  /**
   * The literals of a JSON text that parsed, if it has any an integer field could take: integers written
   * with a fraction or an exponent (`1e3`, `1.0`) and integers of 16 digits or more. Other fractions
   * (`0.5`) no integer field takes anyway. Undefined for most bodies.
   */
  static scan(text: string): NumberLiterals | undefined {
    let values: Set<number> | undefined;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) i = stringEnd(text, i).end;
      else if (c === MINUS || (c >= ZERO && c <= NINE)) {
        const end = literalEnd(text, i);
        if (isNotablyWritten(text, i, end) && mayBeInteger(text, i, end)) {
          const value = Number(text.slice(i, end));
          if (Number.isInteger(value)) (values ??= new Set()).add(value);
        }
        i = end - 1;
      }
    }
    return values ? new NumberLiterals(text, values) : undefined;
  }

  /** Whether some literal became `value`: only then is a field holding it worth resolving. */
  mayHave(value: number): boolean {
    return this.values.has(value);
  }

  /**
   * The literals of a JSON patch's values, seen where its `add` and `replace` operations put them in the
   * patched object (`/spec/template/spec/containers/-` appends, so it matches any index there).
   */
  movedByJsonPatch(operations: unknown): NumberLiterals | undefined {
    if (!Array.isArray(operations) || this.operations) return undefined;
    const writing: WritingOperation[] = [];
    operations.forEach((operation: unknown, index) => {
      if (typeof operation !== 'object' || operation === null) return;
      const { op, path } = operation as { op?: unknown; path?: unknown };
      if ((op !== 'add' && op !== 'replace') || typeof path !== 'string') return;
      const tokens = path === '' ? [] : path.slice(1).split('/');
      writing.push({ index, tokens: tokens.map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~')) });
    });
    return writing.length > 0 ? new NumberLiterals(this.text, this.values, writing.reverse()) : undefined;
  }

  /** The text a number at `path` was written as, when it was not a plain integer literal and it became `value`. */
  lookup(path: ValuePath, value: number): string | undefined {
    return this.resolve([{ path, value }])[0];
  }

  /**
   * For each request, the text of the literal at its path when it is not a plain integer literal (`1e3`,
   * `1.0`, `0.5`, a 16-digit integer) and became the request's value (so a value that changed since, by a later patch operation, is not blamed on it). One
   * pass over the text, following only the containers on the way to the paths asked for.
   */
  resolve(requests: readonly { path: ValuePath; value: number }[]): (string | undefined)[] {
    const answers: (string | undefined)[] = requests.map(() => undefined);
    const root: PathNode = {};
    requests.forEach(({ path }, index) => {
      const inText = this.operations ? this.pathInPatch(path) : path;
      if (!inText) return;
      let node = root;
      for (const segment of inText) {
        node.children ??= new Map();
        let child = node.children.get(segment);
        if (!child) node.children.set(segment, (child = {}));
        node = child;
      }
      (node.wanted ??= []).push(index);
    });
    const found = (node: PathNode | undefined, start: number, end: number) => {
      if (!node?.wanted || !isNotablyWritten(this.text, start, end)) return;
      const literal = this.text.slice(start, end);
      for (const index of node.wanted) if (Number(literal) === requests[index]!.value) answers[index] = literal;
    };
    this.follow(root, found);
    return answers;
  }

  /** Where in the patch the value at `path` of the patched object came from: the latest operation writing it. */
  private pathInPatch(path: ValuePath): ValuePath | undefined {
    for (const { index, tokens } of this.operations!) {
      if (tokens.length > path.length) continue;
      const matches = tokens.every((token, i) => {
        const segment = path[i]!;
        return typeof segment === 'number' ? token === '-' || token === String(segment) : token === segment;
      });
      if (matches) return [index, 'value', ...path.slice(tokens.length)];
    }
    return undefined;
  }

  /**
   * Walks the text keeping, for each open container, the node of the paths asked for that it is (or none),
   * and hands `found` each number literal together with the node it sits at.
   */
  private follow(root: PathNode, found: (node: PathNode | undefined, start: number, end: number) => void): void {
    const text = this.text;
    // Parallel stacks, so a deep or long body allocates nothing per container.
    const nodes: (PathNode | undefined)[] = [];
    const arrays: boolean[] = [];
    const indices: number[] = [];
    let keyStart = 0;
    let keyEnd = 0;
    let keyEscaped = false;
    const childAt = (): PathNode | undefined => {
      const depth = nodes.length - 1;
      if (depth < 0) return root;
      const children = nodes[depth]?.children;
      if (!children) return undefined;
      if (arrays[depth]) return children.get(indices[depth]!);
      const raw = text.slice(keyStart, keyEnd);
      return children.get(keyEscaped ? (JSON.parse(`"${raw}"`) as string) : raw);
    };
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        const { end, escaped } = stringEnd(text, i);
        if (nodes.length > 0 && !arrays[nodes.length - 1] && isKey(text, end + 1)) {
          keyStart = i + 1;
          keyEnd = end;
          keyEscaped = escaped;
        }
        i = end;
      } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
        const end = literalEnd(text, i);
        const node = childAt();
        if (node?.wanted) found(node, i, end);
        i = end - 1;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        nodes.push(childAt());
        arrays.push(c === OPEN_BRACKET);
        indices.push(0);
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        nodes.pop();
        arrays.pop();
        indices.pop();
      } else if (c === COMMA) {
        const depth = indices.length - 1;
        if (depth >= 0 && arrays[depth]) indices[depth] = indices[depth]! + 1;
      }
    }
  }
}
