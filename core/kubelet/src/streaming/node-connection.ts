import { access, constants } from 'node:fs/promises';
import { errorMessage, type ContainerStatus, type Pod } from '@skiff/api';
import type {
  ContainerLogOptions,
  ContainerRuntime,
  ContainerStatusInfo,
  NodeConnection,
  NodeResourceUsage,
  PodRef,
  PodSandboxStatus,
  StreamRequest,
} from '@skiff/kernel';
import { hasErrnoCode, KubeletError } from '../errors.js';
import { CRI_LABELS } from '../names.js';
import { resourceUsageOf, type UsageSnapshot } from '../stats/usage.js';
import { DEFAULT_FOLLOW_TIMING, readContainerLog, type FollowTiming } from './container-log.js';

export interface KubeletNodeConnectionOptions {
  nodeName: string;
  runtime: ContainerRuntime;
  /** The pod as this kubelet last saw it, for why a container has not started yet (its waiting reason). */
  pod?: (namespace: string, name: string) => Pod | undefined;
  /** Aborted when the kubelet stops: log followers end with it. */
  signal?: AbortSignal;
  timing?: FollowTiming;
  /** The usage sampler's readings (absent: the node reports no usage). */
  usage?: () => UsageSnapshot;
}

/** What kubectl shows for the most common waiting reasons, as upstream's kubelet words them. */
const WAITING_WORDS: Record<string, string> = {
  ErrImagePull: "image can't be pulled",
  ImagePullBackOff: 'trying and failing to pull image',
};

function isNotFound(err: unknown): boolean {
  const { grpcCode, message } = err as { grpcCode?: unknown; message?: unknown };
  return grpcCode === 'NotFound' || (typeof message === 'string' && message.includes('code = NotFound'));
}

function notRunning(container: ContainerStatusInfo): string {
  if (container.state === 'CONTAINER_CREATED') return 'it has not started';
  if (container.state === 'CONTAINER_EXITED') return `it exited with code ${container.exitCode ?? 0}`;
  return 'its state is unknown';
}

/**
 * How the API server reaches this node's pods: container logs read from the runtime's log files, and the
 * runtime's streaming URLs for exec, attach and port-forward. Pods are found in the runtime by their CRI
 * labels and uid, so a pod deleted and created again under the same name is never confused with the old one.
 */
export class KubeletNodeConnection implements NodeConnection {
  private readonly timing: FollowTiming;

  constructor(private readonly options: KubeletNodeConnectionOptions) {
    this.timing = options.timing ?? DEFAULT_FOLLOW_TIMING;
  }

  async containerLogs(pod: PodRef, container: string, options: ContainerLogOptions, signal: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    const instance = await this.logTarget(pod, container, options.previous ?? false);
    const path = instance.logPath;
    if (!path) throw new KubeletError('SKIFF_ERR_KUBELET_NO_LOG', { container, pod: pod.name, runtime: this.options.runtime.name });
    try {
      await access(path, constants.R_OK);
    } catch (err) {
      // A log the runtime has not created yet reads as empty (or, followed, is waited for).
      if (!hasErrnoCode(err, 'ENOENT'))
        throw new KubeletError('SKIFF_ERR_KUBELET_LOG_READ', { container, pod: pod.name, detail: errorMessage(err) }, { cause: err });
    }
    const stopped = this.options.signal ? AbortSignal.any([signal, this.options.signal]) : signal;
    const source = { path, exited: () => this.exited(instance.id) };
    return namingReadFailures(readContainerLog(source, options, stopped, this.timing), container, pod.name);
  }

  /** The node's and its pods' usage over the sampler's last window; pods with fewer than two readings are left out. */
  async resourceUsage(): Promise<NodeResourceUsage> {
    return resourceUsageOf(this.options.nodeName, this.options.usage?.() ?? { containers: [] });
  }

  async streamURL(kind: 'exec' | 'attach', pod: PodRef, container: string, request: Omit<StreamRequest, 'containerId'>): Promise<string> {
    const { runtime } = this.options;
    if (!runtime[kind]) throw new KubeletError('SKIFF_ERR_KUBELET_STREAMING_UNSUPPORTED', { runtime: runtime.name, kind });
    const latest = (await this.instances(pod, container)).containers.at(-1);
    if (!latest) throw new KubeletError('SKIFF_ERR_KUBELET_CONTAINER_NOT_FOUND', { container });
    if (latest.state !== 'CONTAINER_RUNNING')
      throw new KubeletError('SKIFF_ERR_KUBELET_CONTAINER_NOT_RUNNING', { container, pod: pod.name, state: notRunning(latest) });
    return runtime[kind]({ ...{}, ...request, containerId: latest.id });
  }

  async portForwardURL(pod: PodRef, ports: number[]): Promise<string> {
    const { runtime } = this.options;
    if (!runtime.portForward) throw new KubeletError('SKIFF_ERR_KUBELET_STREAMING_UNSUPPORTED', { runtime: runtime.name, kind: 'port-forward' });
    const ready = (await this.sandboxes(pod)).filter((sandbox) => sandbox.state === 'SANDBOX_READY').at(-1);
    if (!ready) throw this.podNotFound(pod);
    return runtime.portForward(ready.id, ports);
  }

  /**
   * The container instance whose log is asked for: the newest that has started, or with `previous` the one the
   * pod's status shows as the container's last termination (while it waits out a crash-loop back-off, that is its
   * newest instance, as upstream has it); without such a status, the newest that exited before the newest instance.
   */
  private async logTarget(pod: PodRef, container: string, previous: boolean): Promise<ContainerStatusInfo> {
    const { sandboxes, containers } = await this.instances(pod, container);
    if (previous) {
      const lastId = this.knownStatus(pod, container)?.lastState?.terminated?.containerID?.replace(/^[^:]*:\/\//, '');
      const named = lastId ? containers.find((instance) => instance.id === lastId) : undefined;
      if (named) return named;
      const before = containers.slice(0, -1).filter((instance) => instance.state === 'CONTAINER_EXITED');
      const last = before.at(-1);
      if (!last) throw new KubeletError('SKIFF_ERR_KUBELET_PREVIOUS_NOT_FOUND', { container, pod: pod.name });
      return last;
    }
    const started = containers.filter((instance) => instance.state !== 'CONTAINER_CREATED').at(-1);
    if (started) return started;
    throw this.notStarted(pod, container, sandboxes.length > 0);
  }

  /** The container's status in the pod as this kubelet last saw it (this uid only). */
  private knownStatus(ref: PodRef, container: string): ContainerStatus | undefined {
    const pod = this.options.pod?.(ref.namespace, ref.name);
    if (pod?.metadata.uid !== ref.uid) return undefined;
    const { initContainerStatuses = [], containerStatuses = [], ephemeralContainerStatuses = [] } = pod.status ?? {};
    return [...initContainerStatuses, ...containerStatuses, ...ephemeralContainerStatuses].find((status) => status.name === container);
  }

  /** Why a container has nothing to show yet, from the pod's status when the kubelet knows the pod. */
  private notStarted(ref: PodRef, container: string, hasSandbox: boolean): KubeletError {
    const known = this.options.pod?.(ref.namespace, ref.name)?.metadata.uid === ref.uid;
    if (!known && !hasSandbox) return this.podNotFound(ref);
    const state = this.knownStatus(ref, container)?.state;
    if (state?.terminated) return new KubeletError('SKIFF_ERR_KUBELET_CONTAINER_TERMINATED', { container, pod: ref.name });
    const reason = state?.waiting?.reason ?? 'ContainerCreating';
    return new KubeletError('SKIFF_ERR_KUBELET_CONTAINER_WAITING', { container, pod: ref.name, reason: WAITING_WORDS[reason] ?? reason });
  }

  private podNotFound(pod: PodRef): KubeletError {
    return new KubeletError('SKIFF_ERR_KUBELET_POD_NOT_FOUND', { pod: `${pod.namespace}/${pod.name}`, uid: pod.uid, node: this.options.nodeName });
  }

  /** The pod's sandboxes (this uid only), oldest first. */
  private async sandboxes(pod: PodRef): Promise<PodSandboxStatus[]> {
    const named = await this.options.runtime.listPodSandbox({
      labelSelector: { [CRI_LABELS.POD_NAMESPACE]: pod.namespace, [CRI_LABELS.POD_NAME]: pod.name },
    });
    return named.filter((sandbox) => sandbox.metadata.uid === pod.uid).sort((a, b) => a.metadata.attempt - b.metadata.attempt || a.createdAt - b.createdAt);
  }

  /** Every instance of the pod's container the runtime still holds, oldest first. */
  private async instances(pod: PodRef, container: string): Promise<{ sandboxes: PodSandboxStatus[]; containers: ContainerStatusInfo[] }> {
    const sandboxes = await this.sandboxes(pod);
    const containers: ContainerStatusInfo[] = [];
    for (const sandbox of sandboxes) {
      for (const instance of await this.options.runtime.listContainers({ podSandboxId: sandbox.id })) {
        const name = instance.labels?.[CRI_LABELS.CONTAINER_NAME] ?? instance.metadata.name;
        if (name === container) containers.push(instance);
      }
    }
    containers.sort((a, b) => a.createdAt - b.createdAt || a.metadata.attempt - b.metadata.attempt);
    return { sandboxes, containers };
  }

  /** Whether the container has ended; a runtime that no longer knows it says so. */
  private async exited(containerId: string): Promise<boolean> {
    try {
      const status = await this.options.runtime.containerStatus(containerId);
      return !status || status.state === 'CONTAINER_EXITED';
    } catch (err) {
      // Any other runtime failure may pass; the follower asks again and ends with its signal anyway.
      return isNotFound(err);
    }
  }
}

/** A failure while the log is being read (after the response started) names the container it was for. */
async function* namingReadFailures(log: AsyncGenerator<Uint8Array>, container: string, pod: string): AsyncGenerator<Uint8Array> {
  try {
    yield* log;
  } catch (err) {
    throw new KubeletError('SKIFF_ERR_KUBELET_LOG_READ', { container, pod, detail: errorMessage(err) }, { cause: err });
  }
}
