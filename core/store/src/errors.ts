import { formatMessage } from '@skiff/kernel';
import { StoreError, type StoreErrorKind } from './types.js';

/**
 * Every error the store raises: a stable code, the StoreError kind callers branch on (absent for
 * programming mistakes, which are not StoreErrors), and a message template.
 */
export const STORE_ERRORS = Object.freeze({
  SKIFF_ERR_STORE_NOT_FOUND: { kind: 'NotFound', message: 'key {key} not found' },
  SKIFF_ERR_STORE_EXISTS: { kind: 'Exists', message: 'key {key} already exists' },
  SKIFF_ERR_STORE_CONFLICT: { kind: 'Conflict', message: 'key {key} is at revision {actual}, not the expected revision {expected}' },
  SKIFF_ERR_STORE_COMPACTED: { kind: 'Compacted', message: 'revision {revision} is older than the compacted revision {compacted}' },
  SKIFF_ERR_STORE_CONTINUE_INVALID: { kind: 'InvalidContinue', message: 'invalid continue token: {detail}' },
  SKIFF_ERR_STORE_CLOSED: { kind: 'Closed', message: 'the store is closed' },
  SKIFF_ERR_STORE_NO_SPACE: { kind: 'NoSpace', message: '{what} ({cause}): writes are refused until space is freed; reads keep working' },
  SKIFF_ERR_STORE_COMMIT_FAILED: { kind: 'CommitFailed', message: 'the store could not commit the write ({cause}); nothing was written' },
  SKIFF_ERR_STORE_KEY_INVALID: { kind: undefined, message: 'invalid store key {key}: {detail}' },
  SKIFF_ERR_STORE_ARGUMENT_INVALID: { kind: undefined, message: 'invalid argument {name}: {detail}' },
  SKIFF_ERR_STORE_VALUE_INVALID: { kind: undefined, message: 'cannot store the object at {key}: {detail}' },
  SKIFF_ERR_STORE_SEALED: {
    kind: undefined,
    message: 'the value at {key} is encrypted and no encryption is configured: start with the encryption plugin and the keys that sealed it',
  },
  SKIFF_ERR_STORE_UNSEALABLE: { kind: undefined, message: 'the value at {key} cannot be decrypted: {detail}' },
} as const satisfies Record<string, { kind: StoreErrorKind | undefined; message: string }>);

export type StoreErrorCode = keyof typeof STORE_ERRORS;
type KindedCode = { [C in StoreErrorCode]: (typeof STORE_ERRORS)[C]['kind'] extends StoreErrorKind ? C : never }[StoreErrorCode];
type UsageCode = Exclude<StoreErrorCode, KindedCode>;

function format(code: StoreErrorCode, params: Record<string, string | number>): string {
  return formatMessage(STORE_ERRORS[code].message, params);
}

/** A StoreError that also carries its stable code (for logs and for the API server's error mapping). */
export class CodedStoreError extends StoreError {
  constructor(
    readonly code: KindedCode,
    params: Record<string, string | number> = {},
    key?: string,
  ) {
    super(STORE_ERRORS[code].kind, format(code, params), key);
  }
}

/** A mistake in how the store was called (a bad key, a bad option): a bug in the caller, not a state of the data. */
export class StoreUsageError extends Error {
  constructor(
    readonly code: UsageCode,
    params: Record<string, string | number>,
  ) {
    super(format(code, params));
    this.name = 'StoreUsageError';
  }
}
