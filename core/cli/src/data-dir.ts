import { chmodSync, mkdirSync, statSync } from 'node:fs';

/** The data dir holds the CA key, the admin token and the whole cluster state: its owner only. */
export const DATA_DIR_MODE = 0o700;

/** Whatever mode the code that writes a file asks for, the server's files and folders end up owner-only. */
export const SERVER_UMASK = 0o077;

/**
 * Creates the data dir with mode 0700, or tightens an existing one that group or others may enter.
 * Returns the mode it had when it had to be tightened.
 */
export function ensurePrivateDataDir(dir: string): number | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
    const stats = statSync(dir);
    if (!stats.isDirectory()) throw new Error('it is not a folder');
    const mode = stats.mode & 0o777;
    if ((mode & 0o077) === 0) return undefined;
    chmodSync(dir, DATA_DIR_MODE);
    return mode;
  } catch (err) {
    throw new Error(`cannot make the data dir ${dir} private (mode 0700): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}
