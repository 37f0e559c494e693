/**
 * Kubernetes' `$(VAR)` expansion (env values, command, args, subPathExpr): `$(NAME)` becomes the variable's
 * value when `lookup` knows it and stays as written otherwise, `$$` is an escaped `$`, and any other `$` — a
 * `$` before another character, or an unclosed `$(` — is kept as it is.
 */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let output = '';
  let i = 0;
  while (i < input.length) {
    const char = input[i]!;
    if (char !== '$' || i + 1 >= input.length) {
      output += char;
      i++;
      continue;
    }
    const next = input[i + 1]!;
    if (next === '$') {
      output += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        output += '$(';
        i += 2;
      } else {
        const name = input.slice(i + 2, close);
        output += lookup(name) ?? `$(${name})`;
        i = close + 1;
      }
    } else {
      output += `$${next}`;
      i += 2;
    }
  }
  return output;
}

/** A lookup over several maps, the first that has the name winning. */
export function lookupIn(...maps: ReadonlyMap<string, string>[]): (name: string) => string | undefined {
  return (name) => {
    for (const map of maps) if (map.has(name)) return map.get(name);
    return undefined;
  };
}
