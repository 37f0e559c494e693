// Schema patterns and CEL `matches` use RE2 syntax (Go's regexp), matched in linear time so a hostile
// pattern or value cannot stall the server; compiled patterns are shared through a small cache.
//
// Compiling is the expensive part and not linear: @bufbuild/re2 copies a literal run for every character
// it adds (100,000 characters: 71 s), repetitions are expanded (`a{1,1000}` is 2,000 instructions) and a
// Unicode class copies its tables. patternCost estimates it from the text so a CRD can be refused before
// its patterns are compiled (see patterns.ts); schema patterns compile when first used, never at start.
import { RE2JS } from '@bufbuild/re2';

export interface Matcher {
  test(text: string): boolean;
}

const MAX_CACHED = 512;
const cache = new Map<string, Matcher>();

/** Compiles an RE2 pattern (throws Go's `error parsing regexp: …` message when it is not one). */
export function compileRegex(pattern: string): Matcher {
  let matcher = cache.get(pattern);
  if (!matcher) {
    matcher = RE2JS.compile(pattern);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(pattern, matcher);
  }
  return matcher;
}

/** Whether `pattern` is compiled already (compiling is the expensive part: microseconds a character). */
export function isCompiled(pattern: string): boolean {
  return cache.has(pattern);
}

/** The reason a pattern is not valid RE2, or undefined when it is. */
export function regexError(pattern: string): string | undefined {
  try {
    compileRegex(pattern);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** A schema's pattern, compiled the first time a value is matched against it (or its error is asked for). */
export class LazyPattern {
  #matcher: Matcher | undefined;
  #error: string | undefined;
  #compiled = false;

  constructor(readonly source: string) {}

  /** Why the pattern is not valid RE2 (a stored CRD from before it was checked), undefined when it is. */
  get error(): string | undefined {
    this.#compile();
    return this.#error;
  }

  test(text: string): boolean {
    this.#compile();
    return this.#matcher?.test(text) ?? false;
  }

  #compile(): void {
    if (this.#compiled) return;
    this.#compiled = true;
    try {
      this.#matcher = compileRegex(this.source);
    } catch (err) {
      this.#error = err instanceof Error ? err.message : String(err);
    }
  }
}

/**
 * What each Unicode class (`\pL`, `\P{Greek}`) written in a pattern adds to patternCost: building one costs
 * 5–200 µs, like ~100 instructions (copies a repetition makes of it are cheap).
 */
export const UNICODE_CLASS_COST = 100;
const REPEAT = /^\{(\d+)(,(\d*))?\}/;
const FLAG = /[imsU-]/;

interface Frame {
  done: number;
  branches: number;
  seq: number;
  capture: boolean;
}

/**
 * An estimate of what compiling `pattern` costs, in instructions of the program RE2 builds, from the text
 * alone: sizes as Go's parser counts them (a literal character 1, `x*` and a group 2 more than x, `x{n,m}`
 * m copies of x and m-n more), plus 100 for each Unicode class written. An upper bound of the program's
 * size for valid patterns; text that is not valid RE2 still gets a number (compiling it then fails).
 */
export function patternCost(pattern: string): number {
  const stack: Frame[] = [];
  let done = 0; // finished alternatives of the innermost group
  let branches = 0; // its `|`s
  let seq = 0; // the alternative being read
  let last = 0; // the last atom of it, which a repetition applies to
  let unicode = 0; // Unicode classes written
  const atom = (cost: number) => {
    seq += cost;
    last = cost;
  };
  const repeat = (cost: number) => {
    seq += cost - last;
    last = cost;
  };
  const n = pattern.length;
  let i = 0;
  while (i < n) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end < 0 ? n : end;
        seq += stop - i - 2;
        last = stop > i + 2 ? 1 : 0;
        i = end < 0 ? n : end + 2;
        continue;
      }
      if ((e === 'p' || e === 'P' || e === 'x') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        i = end < 0 ? n : end + 1;
      } else {
        i += e === 'p' || e === 'P' ? 3 : e === 'x' ? 4 : 2;
      }
      if (e === 'p' || e === 'P') unicode++;
      atom(1);
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < n && pattern[j] !== ']') {
        if (pattern[j] === '\\') {
          if (pattern[j + 1] === 'p' || pattern[j + 1] === 'P') unicode++;
          j += 2;
        } else if (pattern[j] === '[' && pattern[j + 1] === ':') {
          const end = pattern.indexOf(':]', j + 2);
          j = end < 0 ? j + 1 : end + 2;
        } else {
          j++;
        }
      }
      i = j + 1;
      atom(1);
      continue;
    }
    if (c === '(') {
      let capture = true;
      let j = i + 1;
      if (pattern[j] === '?') {
        j++;
        if (pattern[j] === 'P' || pattern[j] === '<') {
          const end = pattern.indexOf('>', j);
          j = end < 0 ? n : end + 1;
        } else {
          while (j < n && FLAG.test(pattern[j]!)) j++;
          capture = false;
          if (pattern[j] === ')') {
            i = j + 1; // (?i): flags, not a group
            last = 0;
            continue;
          }
          j++; // the ':' of (?i:…)
        }
      }
      stack.push({ done, branches, seq, capture });
      done = branches = seq = last = 0;
      i = j;
      continue;
    }
    if (c === '|' || c === ')') {
      done += seq;
      seq = last = 0;
      i++;
      if (c === '|') {
        branches++;
        continue;
      }
      const inner = done + branches;
      const frame = stack.pop();
      if (frame) ({ done, branches, seq } = frame);
      atom(frame?.capture ? inner + 2 : inner);
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      repeat((c === '*' ? 2 : 1) + last);
      i += pattern[i + 1] === '?' ? 2 : 1;
      continue;
    }
    if (c === '{') {
      const m = REPEAT.exec(pattern.slice(i, i + 24));
      if (m) {
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
        repeat(max === -1 ? (min === 0 ? 2 : 1) + min * last : max * last + Math.max(0, max - min));
        i += m[0].length;
        if (pattern[i] === '?') i++;
        continue;
      }
    }
    i++;
    atom(1);
  }
  let size = done + seq + branches;
  for (const frame of stack) size += frame.done + frame.seq + frame.branches;
  return size + unicode * UNICODE_CLASS_COST;
}
