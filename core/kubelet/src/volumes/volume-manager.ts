import { readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, type Node, type Pod } from '@skiff/api';
import type { ApiClient, Logger, VolumeContext, VolumePlugin } from '@skiff/kernel';
import type { PodEventSink } from '../pods/events.js';
import { escapePluginName, type PodFiles } from '../pods/pod-files.js';
import { mountsUnder } from '@skiff/node-host';

/** Where a pod volume is on the node, as containers mount it. */
export interface MountedVolume {
  hostPath: string;
  readOnly: boolean;
}

export interface VolumeManagerOptions {
  plugins: VolumePlugin[];
  files: PodFiles;
  nodeName: string;
  client: ApiClient;
  node: () => Node | undefined;
  logger: Logger;
  /** A pod's volumes are set up again (ConfigMaps, Secrets, tokens refreshed) once this long has passed. */
  refreshMs?: number;
  /** Where volumes find the node's own paths (VolumeContext.hostRoot): `/`, or a stand-in for a simulated node. */
  hostRoot?: string;
}

/** A pod's volumes could not all be set up: the FailedMount messages, one per volume. */
export class VolumeSetUpError extends Error {
  constructor(readonly failures: string[]) {
    super(failures.join('; '));
    this.name = 'VolumeSetUpError';
  }
}

interface SetUpRecord {
  at: number;
  spec: string;
  mounts: Map<string, MountedVolume>;
}

/** A pod known only by its uid (its folder outlived the kubelet's memory of it). */
function podStub(uid: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { uid }, spec: { containers: [] } };
}

/**
 * The kubelet's volume manager: sets a pod's volumes up through the volume plugins before its containers
 * are created (and again, to refresh projected data, on later syncs), and tears them down once its
 * sandbox is gone. Each volume lives in `<dataDir>/pods/<uid>/volumes/<plugin>/<name>` unless its plugin
 * answers another host path (hostPath, a PersistentVolume).
 */
export class VolumeManager {
  private readonly setUps = new Map<string, SetUpRecord>();

  constructor(private readonly options: VolumeManagerOptions) {}

  /**
   * Sets every volume of the pod up and answers where each is. A pod whose volumes were set up before keeps
   * running on them when a refresh fails (the failure is an event); a first set-up that fails throws
   * VolumeSetUpError, so the pod waits in ContainerCreating.
   */
  async setUp(pod: Pod, event: PodEventSink): Promise<Map<string, MountedVolume>> {
    const uid = pod.metadata.uid!;
    const volumes = (pod.spec.volumes as Record<string, unknown>[] | undefined) ?? [];
    const spec = JSON.stringify(volumes);
    const previous = this.setUps.get(uid);
    const now = Date.now();
    if (previous && previous.spec === spec && now - previous.at < (this.options.refreshMs ?? 0)) return previous.mounts;

    const context = this.context(event);
    const mounts = new Map<string, MountedVolume>();
    const failures: string[] = [];
    for (const volume of volumes) {
      const name = String(volume.name ?? '');
      const plugin = this.options.plugins.find((candidate) => candidate.canSupport(volume));
      try {
        if (!plugin) throw new Error('no volume plugin matched');
        const dir = this.options.files.volumeDir(uid, plugin.name, name);
        const result = await plugin.setUp(pod, volume, dir, context);
        mounts.set(name, { hostPath: result?.path ?? dir, readOnly: result?.readOnly ?? false });
      } catch (err) {
        failures.push(`MountVolume.SetUp failed for volume "${name}" : ${errorMessage(err)}`);
      }
    }
    for (const failure of failures) event('Warning', 'FailedMount', failure);
    if (failures.length && (!previous || previous.spec !== spec)) throw new VolumeSetUpError(failures);
    const merged = failures.length ? new Map([...previous!.mounts, ...mounts]) : mounts;
    this.setUps.set(uid, { at: now, spec, mounts: merged });
    return merged;
  }

  /**
   * Tears down every volume folder of the pod (its sandbox is gone), then removes the pod's folder, unless
   * something is still mounted in it. `pod` is the pod when the kubelet still knows it.
   */
  async removePod(uid: string, pod: Pod = podStub(uid), event: PodEventSink = () => undefined): Promise<void> {
    await this.tearDown(uid, pod, event);
    const { files, logger } = this.options;
    const podDir = files.podDir(uid);
    const stillMounted = await mountsUnder(podDir);
    if (stillMounted.length) return logger.warn({ uid, mounts: stillMounted }, 'keeping the folder of a removed pod: something is still mounted in it');
    await rm(podDir, { recursive: true, force: true });
    await files.removeLogs(uid);
  }

  /**
   * Tears down every volume folder of the pod (its sandbox is gone) and keeps the rest of its folder and its
   * logs: a pod that finished, or one stopped with the node, is still there to look at.
   */
  async tearDown(uid: string, pod: Pod = podStub(uid), event: PodEventSink = () => undefined): Promise<void> {
    this.setUps.delete(uid);
    const { files, logger } = this.options;
    const context = this.context(event);
    const volumesDir = files.volumesDir(uid);
    for (const pluginDir of await readdir(volumesDir).catch(() => [] as string[])) {
      const plugin = this.options.plugins.find((candidate) => escapePluginName(candidate.name) === pluginDir);
      for (const volume of await readdir(join(volumesDir, pluginDir)).catch(() => [] as string[])) {
        const dir = join(volumesDir, pluginDir, volume);
        try {
          if (plugin) await plugin.tearDown(pod, volume, dir, context);
          else if (!(await mountsUnder(dir)).length) await rm(dir, { recursive: true, force: true });
        } catch (err) {
          logger.warn({ err, uid, volume, plugin: pluginDir }, 'tearing a volume down failed');
        }
      }
      // Gone once every volume in it is (rmdir leaves a folder with anything left in it alone).
      await rmdir(join(volumesDir, pluginDir)).catch(() => undefined);
    }
  }

  /** Tears down the volumes of every pod this node has a folder for (the kubelet stops its pods on shutdown). */
  async tearDownAll(): Promise<void> {
    for (const uid of await this.options.files.knownUids()) await this.tearDown(uid);
  }

  /**
   * Removes the folders of pods that are neither wanted nor in the runtime (deleted while the kubelet was away).
   * `wanted` is asked about each pod just before its folder would go, so it must read the current state (the
   * informer), not a snapshot taken before the folders were listed: a pod added meanwhile would lose its files.
   */
  async removeOrphans(wanted: (uid: string) => boolean): Promise<void> {
    for (const uid of await this.options.files.knownUids()) {
      if (wanted(uid)) continue;
      this.options.logger.info({ uid }, 'removing the files of a pod that is gone');
      await this.removePod(uid);
    }
  }

  private context(event: PodEventSink): VolumeContext {
    const { nodeName, files, client, logger, node, hostRoot = '/' } = this.options;
    return { nodeName, dataDir: files.dataDir, hostRoot, client, logger, node, event };
  }
}
