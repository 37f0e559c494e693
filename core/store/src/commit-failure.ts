import { statfsSync } from 'node:fs';
import { constants } from 'node:os';
import { CodedStoreError } from './errors.js';

/** LMDB's code for a map that cannot grow any more (lmdb.h). lmdb-js grows the map by itself, so this is rare. */
const MDB_MAP_FULL = -30792;
/**
 * LMDB reports a short write as EIO. A short write that ran out of disk leaves next to nothing free, so an EIO
 * with less than this free is a full disk, not a failing one.
 */
const NEARLY_FULL_BYTES = 1024 * 1024;

const ERRNO = constants.errno;
const ERRNO_NAMES = new Map<number, string>(Object.entries(ERRNO).map(([name, value]) => [value, name]));

/** How lmdb-js rejects every write of a transaction whose commit failed: the reason comes through `commitError`. */
export interface LmdbCommitFailure extends Error {
  commitError: Promise<never>;
}

export function isCommitFailure(error: unknown): error is LmdbCommitFailure {
  return error instanceof Error && 'commitError' in error && error.commitError instanceof Promise;
}

/**
 * Why LMDB refused the commit. lmdb-js rejects `commitError` (one promise shared by the transaction's writes) and
 * never handles it itself (kriszyp/lmdb-js#368), so handling it here also keeps it from being an unhandled
 * rejection, which would end the process. It is already rejected when the writes' own rejections arrive; should
 * lmdb-js not have said why, the cause is unknown.
 */
export function commitCause(failure: LmdbCommitFailure): Promise<unknown> {
  const cause = failure.commitError.then(
    () => undefined,
    (error: unknown) => error,
  );
  return Promise.race([cause, new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)))]);
}

/** What a failed commit is reported as: NoSpace when the disk or the map is full, CommitFailed otherwise. */
export function commitFailureError(cause: unknown, path: string): CodedStoreError {
  const code = errno(cause);
  if (code === ERRNO.ENOSPC) return noSpace("the store's disk is full", 'ENOSPC');
  if (code === ERRNO.EDQUOT) return noSpace("the store's disk quota is used up", 'EDQUOT');
  if (code === MDB_MAP_FULL) return noSpace("the store's LMDB map is full", 'MDB_MAP_FULL');
  if (code === ERRNO.EIO) {
    const free = freeBytes(path);
    if (free !== undefined && free < NEARLY_FULL_BYTES) return noSpace("the store's disk is full", `EIO on a short write, ${Math.floor(free / 1024)} KiB free`);
  }
  return new CodedStoreError('SKIFF_ERR_STORE_COMMIT_FAILED', { cause: describeCause(cause) });
}

/** Bytes this process may still write on the file system holding `path` (root may use the blocks reserved for it). */
export function freeBytes(path: string): number | undefined {
  try {
    const stats = statfsSync(path);
    return (process.getuid?.() === 0 ? stats.bfree : stats.bavail) * stats.bsize;
  } catch {
    return undefined;
  }
}

function noSpace(what: string, cause: string): CodedStoreError {
  return new CodedStoreError('SKIFF_ERR_STORE_NO_SPACE', { what, cause });
}

/** lmdb-js gives LMDB's status as a number: an errno, or one of LMDB's own negative codes. */
function errno(cause: unknown): number | undefined {
  if (typeof cause !== 'object' || cause === null || !('code' in cause)) return undefined;
  const { code } = cause;
  if (typeof code === 'number') return code;
  return typeof code === 'string' ? ERRNO[code as keyof typeof ERRNO] : undefined;
}

function describeCause(cause: unknown): string {
  if (cause === undefined) return 'lmdb-js gave no reason';
  const code = errno(cause);
  const message = cause instanceof Error ? cause.message : String(cause);
  const name = code === undefined ? undefined : (ERRNO_NAMES.get(code) ?? String(code));
  return name ? `${name}: ${message}` : message;
}
