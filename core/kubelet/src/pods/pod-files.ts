import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** A pod as its folders name it. */
export interface PodIdentity {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * Where a node keeps each pod's files, as Kubernetes lays them out under its root dir:
 *
 * ```
 * <dataDir>/pods/<uid>/volumes/<plugin, / as ~>/<volume>   volume folders (kubernetes.io~empty-dir/cache)
 * <dataDir>/pods/<uid>/etc-hosts                           the pod's /etc/hosts
 * <dataDir>/pods/<uid>/containers/<container>/<attempt>    each container instance's termination-log file
 * <dataDir>/logs/<namespace>_<name>_<uid>/                 the sandbox's log directory (<container>/<attempt>.log)
 * ```
 */
export class PodFiles {
  constructor(readonly dataDir: string) {}

  get podsDir(): string {
    return join(this.dataDir, 'pods');
  }

  get logsDir(): string {
    return join(this.dataDir, 'logs');
  }

  podDir(uid: string): string {
    return join(this.podsDir, uid);
  }

  volumesDir(uid: string): string {
    return join(this.podDir(uid), 'volumes');
  }

  volumeDir(uid: string, plugin: string, volume: string): string {
    return join(this.volumesDir(uid), escapePluginName(plugin), volume);
  }

  etcHosts(uid: string): string {
    return join(this.podDir(uid), 'etc-hosts');
  }

  terminationLog(uid: string, container: string, attempt: number): string {
    return join(this.podDir(uid), 'containers', container, String(attempt));
  }

  /** The sandbox's log directory: the runtime writes `<container>/<attempt>.log` in it. */
  logDirectory(pod: PodIdentity): string {
    return join(this.logsDir, `${pod.namespace}_${pod.name}_${pod.uid}`);
  }

  /** Makes the pod's folder and log directory (before its sandbox starts). */
  async prepare(pod: PodIdentity): Promise<void> {
    await mkdir(this.podDir(pod.uid), { recursive: true, mode: 0o750 });
    await mkdir(this.logDirectory(pod), { recursive: true, mode: 0o755 });
  }

  /** The uids that have a pod folder or a log directory. */
  async knownUids(): Promise<Set<string>> {
    const uids = new Set(await readdir(this.podsDir).catch(() => [] as string[]));
    for (const entry of await readdir(this.logsDir).catch(() => [] as string[])) {
      const uid = entry.split('_')[2];
      if (uid) uids.add(uid);
    }
    return uids;
  }

  /** Removes the pod's log directories (every one with its uid). */
  async removeLogs(uid: string): Promise<void> {
    for (const entry of await readdir(this.logsDir).catch(() => [] as string[]))
      if (entry.split('_')[2] === uid) await rm(join(this.logsDir, entry), { recursive: true, force: true });
  }
}

/** `kubernetes.io/empty-dir` → `kubernetes.io~empty-dir`, as Kubernetes names plugin folders. */
export function escapePluginName(name: string): string {
  return name.replaceAll('/', '~');
}
