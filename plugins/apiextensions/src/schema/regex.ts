// Schema patterns and CEL `matches` use RE2 syntax (Go's regexp), matched in linear time so a hostile
// pattern or value cannot stall the server; compiled patterns are shared through a small cache.
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
