/** `one` for a count of 1, `many` otherwise. */
export const plural = (count: number, one: string, many: string): string => (count === 1 ? one : many);

/** `"a", "b"`: each item in double quotes, comma-separated. */
export const quoted = (items: Iterable<string>): string => [...items].map((item) => `"${item}"`).join(', ');

/** The distinct items, sorted (code-unit order, as Go sorts strings). */
export const sortedSet = (items: Iterable<string>): string[] => [...new Set(items)].sort();

/** `container "a"` / `containers "a", "b"`. */
export const containersPhrase = (names: readonly string[]): string => `${plural(names.length, 'container', 'containers')} ${quoted(names)}`;
