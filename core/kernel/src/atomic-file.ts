import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes a file that others read while it may be rewritten (kubeconfigs, certificates, keys, token files): the
 * data goes to a new temporary file in the same folder, created with `mode` (0600 for credentials) and flushed to
 * disk, which is then renamed over `path` in one step. A reader sees the old file or the new one, never an empty
 * or half-written one, and a crash midway leaves the old file as it was.
 */
export function writeFileAtomically(path: string, data: string | Uint8Array, mode: number): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const temporary = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temporary, 'wx', mode);
  try {
    try {
      // The umask may have taken bits from the mode asked for; the file gets exactly that one.
      fchmodSync(fd, mode);
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
}

/**
 * `mkdir -p` whose new folders get exactly `mode`, not what the process's umask leaves of it (the server runs with
 * 0077, which would keep a container running as another user out of a volume's folders). Folders already there
 * keep theirs.
 */
export async function mkdirExact(path: string, mode: number): Promise<void> {
  const first = await mkdir(path, { recursive: true, mode });
  if (first === undefined) return;
  for (let dir = path; ; dir = dirname(dir)) {
    await chmod(dir, mode);
    if (dir === first || dirname(dir) === dir) break;
  }
}
