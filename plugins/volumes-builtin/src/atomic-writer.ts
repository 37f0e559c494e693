import { randomBytes } from 'node:crypto';
import { chmod, chown, readFile, readdir, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { VolumeError } from './errors.js';
import { DATA_LINK, PAYLOAD_DIR_MODE } from './names.js';
import { runningAsRoot } from './tmpfs.js';
import { mkdirExact } from '@skiff/kernel';
import { exists } from './volumes/common.js';

/** The owner and group the kubelet gives a file. */
export interface FileOwner {
  uid?: number;
  gid?: number;
}

/** One file of a projected payload: its bytes, permission bits and, for a token, who owns it. */
export interface PayloadFile {
  data: Buffer;
  mode: number;
  /** Applied when the kubelet runs as root (only root may give a file away). */
  owner?: FileOwner;
}

/** Relative path → file: what a configMap, secret, downwardAPI or projected volume shows. */
export type Payload = Map<string, PayloadFile>;

/** A payload path must stay inside the volume: relative, no `..` element, not starting with `..`. */
export function checkPayloadPath(path: string): void {
  const fail = (detail: string) => new VolumeError('SKIFF_ERR_VOLUME_PATH', { path, detail });
  if (path === '') throw fail('must not be empty');
  if (posix.isAbsolute(path)) throw fail('must be a relative path');
  if (path.split('/').includes('..')) throw fail("must not contain '..'");
  if (path.startsWith('..')) throw fail("must not start with '..'");
}

function timestampedName(): string {
  const now = new Date();
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const stamp = `${now.getUTCFullYear()}_${pad(now.getUTCMonth() + 1)}_${pad(now.getUTCDate())}_${pad(now.getUTCHours())}_${pad(now.getUTCMinutes())}_${pad(now.getUTCSeconds())}`;
  return `..${stamp}.${randomBytes(5).toString('hex')}`;
}

/** Whether the payload folder holds exactly `payload` (same files, bytes and modes). */
async function holds(folder: string, payload: Payload): Promise<boolean> {
  for (const [path, file] of payload) {
    try {
      const [data, info] = await Promise.all([readFile(join(folder, path)), stat(join(folder, path))]);
      if (!data.equals(file.data) || (info.mode & 0o7777) !== file.mode) return false;
      if (file.owner && runningAsRoot() && (info.uid !== (file.owner.uid ?? info.uid) || info.gid !== (file.owner.gid ?? info.gid))) return false;
    } catch {
      return false;
    }
  }
  const count = async (dir: string): Promise<number> => {
    let files = 0;
    for (const entry of await readdir(dir, { withFileTypes: true })) files += entry.isDirectory() ? await count(join(dir, entry.name)) : 1;
    return files;
  };
  return (await count(folder)) === payload.size;
}

/**
 * Writes a payload into `dir` the way Kubernetes' atomic writer does, so a container never sees half an update:
 * the files go into a new hidden folder `..<timestamp>.<random>`, the `..data` symlink is swapped to it in one
 * rename, every top-level name is a symlink through `..data`, and the previous folder is removed. Returns
 * whether anything changed.
 */
export async function writeAtomically(dir: string, payload: Payload): Promise<boolean> {
  for (const path of payload.keys()) checkPayloadPath(path);
  await mkdirExact(dir, PAYLOAD_DIR_MODE);
  const dataLink = join(dir, DATA_LINK);
  const previous = await readlink(dataLink).catch(() => undefined);
  if (previous && (await holds(join(dir, previous), payload))) return false;

  const folderName = timestampedName();
  const folder = join(dir, folderName);
  await mkdirExact(folder, PAYLOAD_DIR_MODE);
  for (const [path, file] of payload) {
    const target = join(folder, path);
    await mkdirExact(dirname(target), PAYLOAD_DIR_MODE);
    // Owner-only until its mode and owner are set: a token is never readable by others, even for a moment.
    await writeFile(target, file.data, { mode: 0o600 });
    if (file.owner && runningAsRoot()) await chown(target, file.owner.uid ?? -1, file.owner.gid ?? -1);
    await chmod(target, file.mode);
  }
  const temporaryLink = join(dir, `${DATA_LINK}_tmp`);
  await rm(temporaryLink, { force: true });
  await symlink(folderName, temporaryLink);
  await rename(temporaryLink, dataLink);

  const visible = new Set([...payload.keys()].map((path) => path.split('/')[0]!));
  for (const name of visible) {
    const link = join(dir, name);
    if (!(await exists(link))) await symlink(join(DATA_LINK, name), link);
  }
  // The previous payload, names the payload no longer has, and folders of an interrupted earlier write.
  for (const entry of await readdir(dir)) {
    if (entry === DATA_LINK || entry === folderName || visible.has(entry)) continue;
    await rm(join(dir, entry), { recursive: true, force: true });
  }
  return true;
}
