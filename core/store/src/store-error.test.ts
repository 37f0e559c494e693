import { describe, expect, it } from 'vitest';
import { CodedStoreError } from './errors.js';
import { StoreError } from './types.js';

/** The mark every copy of @skiff/store puts on its StoreErrors. */
const MARK = Symbol.for('@skiff/store.StoreError');

describe('StoreError', () => {
  it('is recognised across copies of the package, so the API server maps it whichever copy threw it', () => {
    // What another copy of @skiff/store throws: its own class, carrying the shared mark.
    class OtherCopysStoreError extends Error {
      readonly [MARK] = true;
      readonly kind = 'Exists';
    }
    expect(new OtherCopysStoreError('key /registry/nodes/n already exists') instanceof StoreError).toBe(true);
    expect(new CodedStoreError('SKIFF_ERR_STORE_EXISTS', { key: '/k' }) instanceof StoreError).toBe(true);
  });

  it('is not claimed by what is no StoreError, and subclasses keep their own identity', () => {
    expect(new Error('key exists') instanceof StoreError).toBe(false);
    expect((null as unknown) instanceof StoreError).toBe(false);
    expect({ kind: 'Exists' } instanceof StoreError).toBe(false);
    expect(new StoreError('Exists', 'key /k already exists') instanceof CodedStoreError).toBe(false);
  });
});
