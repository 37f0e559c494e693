import { CodedStoreError } from './errors.js';

/** What a continue token carries: the snapshot the first page was read at, and the last key returned. */
export interface ContinuePosition {
  revision: number;
  afterKey: string;
}

const TOKEN_VERSION = 1;

export function encodeContinue(position: ContinuePosition): string {
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, rev: position.revision, after: position.afterKey })).toString('base64url');
}

/** Decodes a token from a client; anything that is not a token this store made for `prefix` is InvalidContinue. */
export function decodeContinue(token: string, prefix: string): ContinuePosition {
  const invalid = (detail: string) => new CodedStoreError('SKIFF_ERR_STORE_CONTINUE_INVALID', { detail });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not base64-encoded JSON');
  }
  const fields = (parsed ?? {}) as { v?: unknown; rev?: unknown; after?: unknown };
  if (fields.v !== TOKEN_VERSION) throw invalid('unknown token version');
  if (!Number.isSafeInteger(fields.rev) || (fields.rev as number) < 0) throw invalid('bad revision');
  if (typeof fields.after !== 'string' || !fields.after.startsWith(prefix)) throw invalid('the token belongs to another list');
  return { revision: fields.rev as number, afterKey: fields.after };
}
