// Narrowing values whose shape is not known yet (parsed JSON, response bodies, caught errors) by looking at
// them, so the code that reads them needs no cast.
import type { KubeObject, Status } from './types.js';

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object with metadata: what the API serves and stores, of any kind. */
export function isKubeObject(value: unknown): value is KubeObject {
  return isJsonObject(value) && isJsonObject(value.metadata);
}

/** A Status: what an API error, and some successes, answer. */
export function isStatus(value: unknown): value is Status {
  return isJsonObject(value) && value.kind === 'Status';
}

/** What a caught value says: its message when it has one (an Error's), else the value as text. */
export function errorMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'message' in err && typeof err.message === 'string') return err.message;
  return String(err);
}
