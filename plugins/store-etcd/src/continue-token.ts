import { CodedStoreError } from '@skiff/store';

/** A continue token: the revision the first page was read at, and the last key returned. */
export interface ContinuePosition {
  revision: number;
  afterKey: string;
}

const TOKEN_VERSION = 1;

export function encodeContinue(position: ContinuePosition): string {
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, etcd: position.revision, after: position.afterKey })).toString('base64url');
}

/** Reads a token from a client: anything but a token of this store for `prefix` is InvalidContinue. */
export function decodeContinue(token: string, prefix: string): ContinuePosition {
  const invalid = (detail: string) => new CodedStoreError('SKIFF_ERR_STORE_CONTINUE_INVALID', { detail });
  let parsed: { v?: unknown; etcd?: unknown; after?: unknown };
  try {
    parsed = (JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) ?? {}) as typeof parsed;
  } catch {
    throw invalid('not base64-encoded JSON');
  }
  if (parsed.v !== TOKEN_VERSION || !('etcd' in parsed)) throw invalid('not a token of the etcd store');
  if (!Number.isSafeInteger(parsed.etcd) || (parsed.etcd as number) <= 0) throw invalid('bad revision');
  if (typeof parsed.after !== 'string' || !parsed.after.startsWith(prefix)) throw invalid('the token belongs to another list');
  return { revision: parsed.etcd as number, afterKey: parsed.after };
}
