// Narrowing values whose shape is not known yet (parsed JSON, caught errors) by looking at them, so the
// code that reads them needs no cast.

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a caught value says: its message when it has one (an Error's), else the value as text. */
export function errorMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'message' in err && typeof err.message === 'string') return err.message;
  return String(err);
}
