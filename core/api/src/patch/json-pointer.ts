// JSON Pointer (RFC 6901): `/spec/containers/0/image`, with `~1` for `/` and `~0` for `~` inside a token.

/** The unescaped reference tokens of a pointer (`""` is the whole document: no tokens). Throws on bad syntax. */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new SyntaxError(`JSON pointer "${pointer}" must be empty or start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token)) throw new SyntaxError(`JSON pointer "${pointer}" has a "~" not followed by 0 or 1`);
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}
