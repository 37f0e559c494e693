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
const ANY_INDEX = Symbol('any index');

/** Integer literals this long may not survive as a double; their text is kept for exact messages. */
const LONG_INTEGER_DIGITS = 16;

/** The segment a top-level number is kept under; `lookup([])` finds it. */
const ROOT = Symbol('root');

/** An object key, an array index, any index, or the top level. */
type Segment = string | number | typeof ANY_INDEX | typeof ROOT;

/** A container on the way to literals, or a literal: its offset in the scanned text (no copy per literal). */
type Entry = Branch | number;

/** An array's literals by index (a long array of literals costs one slot each), or an object's by key. */
type Branch = Entry[] | Map<Exclude<Segment, number>, Entry>;

const branchFor = (segment: Segment): Branch => (typeof segment === 'number' ? [] : new Map());

function entryAt(container: Branch, segment: Segment): Entry | undefined {
  if (Array.isArray(container)) return typeof segment === 'number' ? container[segment] : undefined;
  return typeof segment === 'number' ? undefined : container.get(segment);
}

function setEntry(container: Branch, segment: Segment, entry: Entry): void {
  if (Array.isArray(container)) {
    if (typeof segment === 'number') container[segment] = entry;
  } else if (typeof segment !== 'number') container.set(segment, entry);
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

/** Number literals by the path of the value they became: object keys as strings, array indices as numbers. */
export class NumberLiterals {
  /** Made for the first literal: an array for a body that is an array. */
  private root?: Branch;
  private count = 0;

  /** `source`: the JSON text the literals were found in (each is kept as its offset there). */
  private constructor(private readonly source: string) {}

  /** How many literals are kept. */
  get size(): number {
    return this.count;
  }

  /**
   * The text a number at `path` was written as, when it was not a plain integer literal; undefined
   * otherwise. `value` is what the field holds now: a literal is only reported for the value it wrote.
   */
  lookup(path: readonly (string | number)[], value: number): string | undefined {
    if (!this.root) return undefined;
    let entry: Entry | undefined = path.length === 0 ? entryAt(this.root, ROOT) : this.root;
    for (const segment of path) {
      if (entry === undefined || typeof entry === 'number') return undefined;
      // An index may have been written as a JSON pointer token ("0") or an append ("-").
      entry = entryAt(entry, segment) ?? (typeof segment === 'number' ? (entryAt(entry, String(segment)) ?? entryAt(entry, ANY_INDEX)) : undefined);
    }
    if (typeof entry !== 'number') return undefined;
    const text = this.source.slice(entry, literalEnd(this.source, entry));
    return Number(text) === value ? text : undefined;
  }

  /**
   * The notable number literals of a JSON text that parsed: integers written with a fraction or an
   * exponent (`1e3`, `1.0`: JSON.parse makes them integers an integer field would take) and integers of
   * 16 digits or more. Undefined when there are none (the usual case). Other fractions (`0.5`) are left
   * out: no integer field takes them anyway, and float-heavy bodies cost nothing. Linear: a literal costs
   * one map entry in its container's branch, and a container's branch is made once.
   */
  static scan(text: string): NumberLiterals | undefined {
    let literals: NumberLiterals | undefined;
    const stack: Frame[] = [];
    const keyText = (start: number, end: number, escaped: boolean) =>
      escaped ? (JSON.parse(`"${text.slice(start, end)}"`) as string) : text.slice(start, end);
    const branchOf = (depth: number, all: NumberLiterals): Branch => {
      const frame = stack[depth]!;
      if (!frame.branch) {
        const at = frame.at;
        frame.branch =
          at === undefined
            ? (all.root ??= frame.array ? [] : new Map())
            : childBranch(branchOf(depth - 1, all), typeof at === 'number' ? at : keyText(at.start, at.end, at.escaped), frame.array);
      }
      return frame.branch;
    };
    const open = (array: boolean) => {
      const parent = stack[stack.length - 1];
      const at = !parent ? undefined : parent.array ? parent.index : { start: parent.keyStart, end: parent.keyEnd, escaped: parent.keyEscaped };
      stack.push({ array, index: 0, keyStart: 0, keyEnd: 0, keyEscaped: false, at });
    };
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
        const end = literalEnd(text, i);
        if (isNotablyWritten(text, i, end) && Number.isInteger(Number(text.slice(i, end)))) {
          literals ??= new NumberLiterals(text);
          const frame = stack[stack.length - 1];
          if (frame)
            literals.keep(branchOf(stack.length - 1, literals), frame.array ? frame.index : keyText(frame.keyStart, frame.keyEnd, frame.keyEscaped), i);
          else literals.keepAtRoot(i);
        }
        i = end - 1;
      } else if (c === OPEN_BRACE) open(false);
      else if (c === OPEN_BRACKET) open(true);
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) stack.pop();
      else if (c === COMMA) {
        const frame = stack[stack.length - 1];
        if (frame?.array) frame.index++;
      }
    }
    return literals;
  }

  /**
   * The literals of a JSON patch's values, moved to where its `add` and `replace` operations put them
   * (`/spec/template/spec/containers/-` appends, so its index matches any).
   */
  movedByJsonPatch(operations: unknown): NumberLiterals | undefined {
    if (!Array.isArray(operations)) return undefined;
    let moved: NumberLiterals | undefined;
    for (const [path, offset] of this.entries()) {
      const [index, field, ...rest] = path;
      if (field !== 'value' || typeof index !== 'number') continue;
      const operation: unknown = operations[index];
      if (typeof operation !== 'object' || operation === null) continue;
      const { op, path: pointer } = operation as { op?: unknown; path?: unknown };
      if ((op !== 'add' && op !== 'replace') || typeof pointer !== 'string') continue;
      const tokens = pointer === '' ? [] : pointer.slice(1).split('/');
      const target: Segment[] = tokens.map((token) => (token === '-' ? ANY_INDEX : token.replaceAll('~1', '/').replaceAll('~0', '~')));
      const full = [...target, ...rest];
      moved ??= new NumberLiterals(this.source);
      if (full.length === 0) {
        moved.keepAtRoot(offset);
        continue;
      }
      let container = (moved.root ??= branchFor(full[0]!));
      for (let i = 0; i < full.length - 1; i++) container = childBranch(container, full[i]!, typeof full[i + 1] === 'number');
      moved.keep(container, full[full.length - 1]!, offset);
    }
    return moved;
  }

  private keep(container: Branch, segment: Segment, offset: number): void {
    if (typeof entryAt(container, segment) !== 'number') this.count++;
    setEntry(container, segment, offset);
  }

  /** A body that is one number: kept under no segment at all. */
  private keepAtRoot(offset: number): void {
    setEntry((this.root ??= new Map()), ROOT, offset);
    this.count = 1;
  }

  /** Every literal with its path and offset. */
  private entries(): [Segment[], number][] {
    const out: [Segment[], number][] = [];
    const pending: [Branch, Segment[]][] = this.root ? [[this.root, []]] : [];
    while (pending.length > 0) {
      const [container, path] = pending.pop()!;
      const children: [Segment, Entry][] = [];
      container.forEach((entry: Entry, segment: Segment) => children.push([segment, entry]));
      for (const [segment, entry] of children) {
        if (typeof entry === 'number') out.push([segment === ROOT ? path : [...path, segment], entry]);
        else pending.push([entry, [...path, segment]]);
      }
    }
    return out;
  }
}

/** The branch at `segment` under `parent`, made (an array when `array`) if there is none. */
function childBranch(parent: Branch, segment: Segment, array: boolean): Branch {
  const existing = entryAt(parent, segment);
  if (existing !== undefined && typeof existing !== 'number') return existing;
  const created: Branch = array ? [] : new Map();
  setEntry(parent, segment, created);
  return created;
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

/** An open object or array while scanning. */
interface Frame {
  array: boolean;
  /** The current index of an array. */
  index: number;
  /** The current key of an object, as a slice of the text (decoded only when a literal needs it). */
  keyStart: number;
  keyEnd: number;
  keyEscaped: boolean;
  /** Where this container sits in its parent: the parent's index, or its key's slice. */
  at: number | { start: number; end: number; escaped: boolean } | undefined;
  /** This container's branch, made when the first literal inside it needs it. */
  branch?: Branch;
}
