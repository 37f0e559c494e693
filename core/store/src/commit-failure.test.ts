import { constants, tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { commitFailureError } from './commit-failure.js';

/** What lmdb-js rejects `commitError` with: LMDB's status as `code`, its text as the message. */
function lmdbError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

// The EIO case on a real full disk is in disk-full.test.ts; these are the codes a small tmpfs does not produce.
describe('commitFailureError', () => {
  it('calls a full disk, an exhausted quota and a full LMDB map NoSpace', () => {
    expect(commitFailureError(lmdbError(constants.errno.ENOSPC, 'No space left on device'), tmpdir())).toMatchObject({
      kind: 'NoSpace',
      code: 'SKIFF_ERR_STORE_NO_SPACE',
      message: "the store's disk is full (ENOSPC): writes are refused until space is freed; reads keep working",
    });
    expect(commitFailureError(lmdbError(constants.errno.EDQUOT, 'Disk quota exceeded'), tmpdir()).message).toMatch(
      /^the store's disk quota is used up \(EDQUOT\)/,
    );
    expect(commitFailureError(lmdbError(-30792, 'MDB_MAP_FULL: Environment mapsize limit reached'), tmpdir()).message).toMatch(
      /^the store's LMDB map is full \(MDB_MAP_FULL\)/,
    );
  });

  it('calls an I/O error with free space left, or an unknown cause, CommitFailed', () => {
    expect(commitFailureError(lmdbError(constants.errno.EIO, 'Input/output error'), tmpdir())).toMatchObject({
      kind: 'CommitFailed',
      code: 'SKIFF_ERR_STORE_COMMIT_FAILED',
      message: 'the store could not commit the write (EIO: Input/output error); nothing was written',
    });
    expect(commitFailureError(undefined, tmpdir()).message).toBe('the store could not commit the write (lmdb-js gave no reason); nothing was written');
  });
});
