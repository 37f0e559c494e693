/** Fills the `{name}` placeholders of a message template; unknown ones stay visible as `{name}`. */
export function formatMessage(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => (params[key] === undefined ? `{${key}}` : String(params[key])));
}

/**
 * The error class for one package's error table (CONVENTIONS.md: a stable code and a message template per
 * error). Each package declares `export class FooError extends codedError('FooError', FOO_ERRORS) {}` and
 * throws `new FooError('SKIFF_ERR_FOO_WHAT', { name: … })`.
 */
export function codedError<Table extends Readonly<Record<string, string>>>(name: string, table: Table) {
  return class CodedError extends Error {
    readonly code: keyof Table & string;

    constructor(code: keyof Table & string, params: Record<string, string | number> = {}, options?: { cause?: unknown }) {
      super(formatMessage(table[code] as string, params), options);
      this.code = code;
      this.name = name;
    }
  };
}
