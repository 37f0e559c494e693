import { access, appendFile, constants, mkdir, rmdir, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { ContainerConfig, Logger, PodSandboxConfig } from '@skiff/kernel';

/** Container logs are the owner's and its group's to read, as containerd and CRI-O create them. */
const LOG_FILE_MODE = 0o640;

/**
 * The CRI log files of the simulated containers. A container's log goes where the kubelet asks (the
 * container's logPath under the sandbox's logDirectory) when that folder can be written, and otherwise under
 * the runtime's own folder (`<dataDir>/pods/<namespace>_<name>_<uid>/<container>/<attempt>.log`, the
 * kubelet's layout), which the container's status then reports. The files go with their containers: removed
 * with them, and all of them when the runtime closes, since nothing of a simulated container outlives it.
 */
export class SimulatedLogs {
  /** Log file by container id. */
  private readonly files = new Map<string, string>();

  constructor(
    private readonly dataDir: string,
    private readonly logger?: Logger,
  ) {}

  /** Chooses and prepares the container's log file; undefined when the kubelet asked for none. */
  async place(containerId: string, sandbox: PodSandboxConfig, config: ContainerConfig): Promise<string | undefined> {
    if (!config.logPath) return undefined;
    const { namespace, name, uid } = sandbox.metadata;
    const own = join(this.dataDir, 'pods', `${namespace}_${name}_${uid}`);
    const candidates = [resolve(sandbox.logDirectory ?? own, config.logPath), join(own, config.metadata.name, `${config.metadata.attempt}.log`)];
    for (const path of candidates) {
      try {
        await mkdir(dirname(path), { recursive: true });
        await access(dirname(path), constants.W_OK);
        this.files.set(containerId, path);
        return path;
      } catch (err) {
        this.logger?.debug({ err, path }, 'log folder not writable; trying the next place');
      }
    }
    return undefined;
  }

  /** Appends one line of output in the CRI log format. */
  async write(containerId: string, stream: 'stdout' | 'stderr', text: string): Promise<void> {
    const path = this.files.get(containerId);
    if (!path) return;
    await appendFile(path, `${new Date().toISOString()} ${stream} F ${text}\n`, { mode: LOG_FILE_MODE }).catch((err: unknown) =>
      this.logger?.warn({ err, path }, 'could not write a simulated container log'),
    );
  }

  /** Removes the container's log file, and its folders once they are empty. */
  async remove(containerId: string): Promise<void> {
    const path = this.files.get(containerId);
    if (!path) return;
    this.files.delete(containerId);
    await unlink(path).catch(() => undefined);
    // Only empty folders go; the pod folder may still hold other containers' logs.
    await rmdir(dirname(path)).catch(() => undefined);
    await rmdir(dirname(dirname(path))).catch(() => undefined);
  }

  async removeAll(): Promise<void> {
    await Promise.all([...this.files.keys()].map((id) => this.remove(id)));
  }
}
