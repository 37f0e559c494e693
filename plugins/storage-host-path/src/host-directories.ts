import { chmod, mkdir, rm } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { errorMessage } from '@skiff/api';
import { StorageError } from './errors.js';

/**
 * The folder under which volumes are host directories, one per PersistentVolume. Removal is refused for
 * any path outside it, so a hand-written PV annotated as ours can never make the controller delete
 * something else on the host.
 */
export class HostDirectories {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  pathFor(volumeName: string): string {
    return join(this.root, volumeName);
  }

  /** Creates the directory, writable by any user, as local-path and hostpath provisioners do (containers run as any uid). */
  async create(path: string): Promise<void> {
    this.checkInside(path);
    try {
      await mkdir(path, { recursive: true });
      await chmod(path, 0o777);
    } catch (err) {
      throw new StorageError('SKIFF_ERR_STORAGE_DIRECTORY', { action: 'create', path, detail: errorMessage(err) }, { cause: err });
    }
  }

  async remove(path: string): Promise<void> {
    this.checkInside(path);
    try {
      await rm(path, { recursive: true, force: true });
    } catch (err) {
      throw new StorageError('SKIFF_ERR_STORAGE_DIRECTORY', { action: 'remove', path, detail: errorMessage(err) }, { cause: err });
    }
  }

  /** Whether `path` is a directory directly or deeper below the root (never the root itself). */
  contains(path: string): boolean {
    const rel = relative(this.root, resolve(path));
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  }

  private checkInside(path: string): void {
    if (!this.contains(path)) throw new StorageError('SKIFF_ERR_STORAGE_OUTSIDE_ROOT', { path, root: this.root });
  }
}
