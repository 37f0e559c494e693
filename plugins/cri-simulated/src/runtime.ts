import { randomBytes, randomUUID } from 'node:crypto';
import type {
  ContainerConfig,
  ContainerRuntime,
  ContainerStatsInfo,
  ContainerStatusInfo,
  ExecSyncResult,
  Logger,
  NodeStatsInfo,
  PodSandboxConfig,
  PodSandboxStatus,
} from '@skiff/kernel';
import { RuntimeError } from './errors.js';
import { imageDigest, imageSize, normalizeImage, repoDigest } from './images.js';
import { SimulatedLogs } from './logs.js';
import {
  CONTAINER_ROLE_LABEL,
  RESTART_POLICY_LABEL,
  RUNTIME_NAME,
  RUNTIME_VERSION,
  SIMULATE_EXEC_EXIT_CODE_ANNOTATION,
  SIMULATE_EXIT_CODE_ANNOTATION,
  SIMULATE_CPU_ANNOTATION,
  SIMULATE_MEMORY_ANNOTATION,
  SIMULATE_RUN_MS_ANNOTATION,
} from './names.js';
import { simulatedNodeStats, simulatedStats, simulatedUsage, type SimulatedUsage } from './usage.js';
import type { SimulatedRuntimeOptions } from './options.js';

interface Sandbox {
  status: PodSandboxStatus;
  config: PodSandboxConfig;
}

const delay = (ms: number) => (ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

function newId(): string {
  return randomBytes(32).toString('hex');
}

const DEFAULT_OPTIONS: SimulatedRuntimeOptions = { startDelayMs: 0, pullDelayMs: 0, runMs: 1000, failImages: [] };

/** A whole number in [min, max] from an annotation, or undefined when it is absent or not one. */
function annotationInteger(value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  const parsed = Number(value);
  return parsed >= min && parsed <= max ? parsed : undefined;
}

function matchesLabels(labels: Record<string, string> | undefined, selector: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

/**
 * A container runtime with the CRI's semantics and no containers behind it (like kwok): sandboxes and
 * containers are records with unique ids, states and timestamps (milliseconds since the epoch).
 * Unknown ids are errors, except that stopping or removing something already removed is a no-op, as
 * the CRI asks. A container is removed only once it is not running, a sandbox only once it is stopped.
 * Given a folder of its own, it writes each started container a CRI log file with one line saying so.
 */
export class SimulatedRuntime implements ContainerRuntime {
  readonly name = RUNTIME_NAME;
  /** No processes or network: the kubelet counts network probes and HTTP hooks against these containers as successes. */
  readonly simulated = true;
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly containers = new Map<string, ContainerStatusInfo>();
  /** Ids that existed and were removed: stop/remove of these succeed quietly. */
  private readonly removed = new Set<string>();
  private readonly images = new Map<string, { id: string; repoTags: string[]; size: number }>();
  /** The process of each running container that will end by itself. */
  private readonly exits = new Map<string, NodeJS.Timeout>();
  /** What each container would run (command then args), for the one command the simulation times: `sleep N`. */
  private readonly argv = new Map<string, string[]>();
  private readonly failImages: Set<string>;
  private readonly options: SimulatedRuntimeOptions;
  /** What each container uses while it runs (its pod's simulate-cpu and simulate-memory, within its limits). */
  private readonly usages = new Map<string, SimulatedUsage>();
  /** CPU time of containers that have ended, which the node's counter keeps. */
  private endedCpuNanoSeconds = 0;
  private readonly bootMs = Date.now();
  /** Containers' log files; none without a data folder (a runtime made for a unit test). */
  private readonly logs: SimulatedLogs | undefined;
  private closed = false;

  constructor(
    options: Partial<SimulatedRuntimeOptions> = {},
    private readonly logger?: Logger,
    dataDir?: string,
  ) {
    this.options = { ...{}, ...DEFAULT_OPTIONS, ...options };
    this.failImages = new Set(this.options.failImages.map(normalizeImage));
    this.logs = dataDir === undefined ? undefined : new SimulatedLogs(dataDir, logger);
  }

  async version() {
    return { runtimeName: RUNTIME_NAME, runtimeVersion: RUNTIME_VERSION, runtimeApiVersion: 'v1' };
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    this.checkOpen();
    const { name, namespace, uid, attempt } = config.metadata;
    for (const [id, sandbox] of this.sandboxes) {
      const held = sandbox.status.metadata;
      if (held.name === name && held.namespace === namespace && held.uid === uid && held.attempt === attempt)
        throw new RuntimeError('SKIFF_ERR_CRI_NAME_RESERVED', { kind: 'sandbox', name: `${name}_${namespace}_${uid}_${attempt}`, id });
    }
    const id = newId();
    this.sandboxes.set(id, {
      config: structuredClone(config),
      status: {
        id,
        metadata: { ...config.metadata },
        state: 'SANDBOX_READY',
        createdAt: Date.now(),
        netnsPath: `/var/run/netns/cni-${randomUUID()}`,
        labels: { ...config.labels },
      },
    });
    this.logger?.debug({ sandbox: id, pod: `${namespace}/${name}` }, 'sandbox started');
    return id;
  }

  async stopPodSandbox(sandboxId: string): Promise<void> {
    const sandbox = this.sandboxes.get(sandboxId);
    if (!sandbox) return this.alreadyRemoved('sandbox', sandboxId);
    for (const container of this.containers.values()) {
      if (container.podSandboxId === sandboxId) this.exit(container);
    }
    sandbox.status.state = 'SANDBOX_NOTREADY';
  }

  async removePodSandbox(sandboxId: string): Promise<void> {
    const sandbox = this.sandboxes.get(sandboxId);
    if (!sandbox) return this.alreadyRemoved('sandbox', sandboxId);
    if (sandbox.status.state === 'SANDBOX_READY')
      throw new RuntimeError('SKIFF_ERR_CRI_STATE', { kind: 'sandbox', id: sandboxId, state: 'ready', detail: 'stop it before removing it' });
    for (const [id, container] of this.containers) {
      if (container.podSandboxId !== sandboxId) continue;
      this.containers.delete(id);
      this.argv.delete(id);
      this.usages.delete(id);
      this.removed.add(id);
      this.forgetExit(id);
      await this.logs?.remove(id);
    }
    this.sandboxes.delete(sandboxId);
    this.removed.add(sandboxId);
  }

  async podSandboxStatus(sandboxId: string): Promise<PodSandboxStatus | undefined> {
    const sandbox = this.sandboxes.get(sandboxId);
    return sandbox && structuredClone(sandbox.status);
  }

  async listPodSandbox(filter?: { labelSelector?: Record<string, string> }): Promise<PodSandboxStatus[]> {
    return [...this.sandboxes.values()]
      .filter((sandbox) => matchesLabels(sandbox.status.labels, filter?.labelSelector))
      .map((sandbox) => structuredClone(sandbox.status));
  }

  async createContainer(sandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    this.checkOpen();
    const sandbox = this.sandboxes.get(sandboxId);
    if (!sandbox) throw new RuntimeError('SKIFF_ERR_CRI_NOT_FOUND', { kind: 'sandbox', id: sandboxId });
    if (sandbox.status.state !== 'SANDBOX_READY')
      throw new RuntimeError('SKIFF_ERR_CRI_STATE', { kind: 'sandbox', id: sandboxId, state: 'not ready', detail: 'cannot create containers in it' });
    const image = this.images.get(normalizeImage(config.image.image));
    if (!image) throw new RuntimeError('SKIFF_ERR_CRI_IMAGE_NOT_PRESENT', { image: config.image.image });
    for (const held of this.containers.values()) {
      if (held.podSandboxId === sandboxId && held.metadata.name === config.metadata.name && held.metadata.attempt === config.metadata.attempt)
        throw new RuntimeError('SKIFF_ERR_CRI_NAME_RESERVED', { kind: 'container', name: `${config.metadata.name}_${config.metadata.attempt}`, id: held.id });
    }
    const id = newId();
    const container: ContainerStatusInfo = {
      id,
      podSandboxId: sandboxId,
      metadata: { ...config.metadata },
      state: 'CONTAINER_CREATED',
      createdAt: Date.now(),
      image: { image: config.image.image },
      imageRef: repoDigest(config.image.image),
      labels: { ...config.labels },
    };
    // Held before the log is placed, so the name stays reserved while that waits on the disk.
    this.containers.set(id, container);
    this.argv.set(id, [...(config.command ?? []), ...(config.args ?? [])]);
    const annotations = sandbox.config.annotations ?? {};
    this.usages.set(id, simulatedUsage(annotations[SIMULATE_CPU_ANNOTATION], annotations[SIMULATE_MEMORY_ANNOTATION], config.linux?.resources));
    const logPath = await this.logs?.place(id, sandboxConfig, config);
    if (logPath) container.logPath = logPath;
    return id;
  }

  async startContainer(containerId: string): Promise<void> {
    this.checkOpen();
    const container = this.containers.get(containerId);
    if (!container) throw new RuntimeError('SKIFF_ERR_CRI_NOT_FOUND', { kind: 'container', id: containerId });
    if (container.state !== 'CONTAINER_CREATED')
      throw new RuntimeError('SKIFF_ERR_CRI_STATE', {
        kind: 'container',
        id: containerId,
        state: container.state,
        detail: 'only a created container can start',
      });
    await delay(this.options.startDelayMs);
    // It may have been stopped or removed while starting.
    if (this.containers.get(containerId) !== container || container.state !== 'CONTAINER_CREATED') return;
    container.state = 'CONTAINER_RUNNING';
    container.startedAt = Date.now();
    await this.logs?.write(containerId, 'stdout', `simulated container ${container.metadata.name} started (image ${container.image.image})`);
    const immediate = immediateExit(this.argv.get(containerId) ?? []);
    if (immediate !== undefined) return this.exit(container, immediate);
    if (container.labels?.[CONTAINER_ROLE_LABEL] === 'init') return this.exit(container);
    const sandbox = this.sandboxes.get(container.podSandboxId);
    const lifetime = this.lifetime(container, sandbox?.config.annotations ?? {});
    if (lifetime) {
      const timer = setTimeout(() => this.exit(container, lifetime.exitCode), lifetime.runMs);
      timer.unref();
      this.exits.set(containerId, timer);
    }
  }

  /**
   * How long a regular container runs and how it ends, if it ends by itself: the pod's
   * skiff.io/simulate-run-ms annotation for any pod; otherwise `runMs` for pods that run to completion
   * (restartPolicy Never or OnFailure), or the N seconds of a `sleep N` it runs as its command (`sleep N`, or
   * `sh -c 'sleep N'`). It exits with skiff.io/simulate-exit-code, 0 by default.
   */
  private lifetime(container: ContainerStatusInfo, annotations: Record<string, string>): { runMs: number; exitCode: number } | undefined {
    const annotatedRunMs = annotationInteger(annotations[SIMULATE_RUN_MS_ANNOTATION], 0, 2 ** 31 - 1);
    const restartPolicy = container.labels?.[RESTART_POLICY_LABEL] ?? 'Always';
    const sleep = sleepSeconds(this.argv.get(container.id) ?? []);
    const completes = restartPolicy === 'Always' ? undefined : sleep !== undefined ? Math.min(sleep * 1000, 2 ** 31 - 1) : this.options.runMs;
    const runMs = annotatedRunMs ?? completes;
    if (runMs === undefined) return undefined;
    return { runMs, exitCode: annotationInteger(annotations[SIMULATE_EXIT_CODE_ANNOTATION], 0, 255) ?? 0 };
  }

  async stopContainer(containerId: string, _timeoutSeconds: number): Promise<void> {
    const container = this.containers.get(containerId);
    if (!container) return this.alreadyRemoved('container', containerId);
    this.exit(container);
  }

  /**
   * ExecSync with no process to run in: a command in a running container answers no output and exit code 0
   * (the pod's skiff.io/simulate-exec-exit-code annotation changes the code), so exec probes and hooks pass;
   * `true` and `false` answer 0 and 1 whatever the annotation (a readiness probe of `/bin/false` fails).
   */
  async execSync(containerId: string, cmd: string[], _timeoutSeconds: number): Promise<ExecSyncResult> {
    this.checkOpen();
    const container = this.containers.get(containerId);
    if (!container) throw new RuntimeError('SKIFF_ERR_CRI_NOT_FOUND', { kind: 'container', id: containerId });
    if (container.state !== 'CONTAINER_RUNNING')
      throw new RuntimeError('SKIFF_ERR_CRI_STATE', { kind: 'container', id: containerId, state: 'not running', detail: 'cannot exec in it' });
    const annotations = this.sandboxes.get(container.podSandboxId)?.config.annotations ?? {};
    const known = immediateExit(cmd);
    if (known !== undefined) return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: known };
    return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: annotationInteger(annotations[SIMULATE_EXEC_EXIT_CODE_ANNOTATION], 0, 255) ?? 0 };
  }

  async removeContainer(containerId: string): Promise<void> {
    const container = this.containers.get(containerId);
    if (!container) return this.alreadyRemoved('container', containerId);
    if (container.state === 'CONTAINER_RUNNING')
      throw new RuntimeError('SKIFF_ERR_CRI_STATE', { kind: 'container', id: containerId, state: 'running', detail: 'stop it before removing it' });
    this.containers.delete(containerId);
    this.argv.delete(containerId);
    this.usages.delete(containerId);
    this.removed.add(containerId);
    this.forgetExit(containerId);
    await this.logs?.remove(containerId);
  }

  async containerStatus(containerId: string): Promise<ContainerStatusInfo | undefined> {
    const container = this.containers.get(containerId);
    return container && structuredClone(container);
  }

  async listContainers(filter?: { podSandboxId?: string }): Promise<ContainerStatusInfo[]> {
    return [...this.containers.values()]
      .filter((container) => !filter?.podSandboxId || container.podSandboxId === filter.podSandboxId)
      .map((container) => structuredClone(container));
  }

  /**
   * The figures of every running container: CPU time at its pod's `skiff.io/simulate-cpu` rate since it started, and
   * its `skiff.io/simulate-memory` as working set, so a kubelet measuring over any window reads those rates back.
   */
  async listContainerStats(): Promise<ContainerStatsInfo[]> {
    const now = Date.now();
    return [...this.containers.values()]
      .filter((container) => container.state === 'CONTAINER_RUNNING')
      .map((container) => {
        const { id, podSandboxId, metadata, labels } = container;
        return simulatedStats({ id, podSandboxId, metadata: { ...metadata }, labels: { ...labels } }, container.startedAt ?? now, this.usageOf(id), now);
      });
  }

  /** The node: a fixed base plus its containers (the CPU time of those that ended included, so the counter only grows). */
  async nodeStats(): Promise<NodeStatsInfo> {
    const now = Date.now();
    let cpu = this.endedCpuNanoSeconds;
    let memory = 0;
    for (const container of this.containers.values()) {
      if (container.state !== 'CONTAINER_RUNNING') continue;
      const usage = this.usageOf(container.id);
      cpu += simulatedStats(container, container.startedAt ?? now, usage, now).cpuCoreNanoSeconds ?? 0;
      memory += usage.memoryBytes;
    }
    return simulatedNodeStats(this.bootMs, now, cpu, memory);
  }

  private usageOf(containerId: string): SimulatedUsage {
    return this.usages.get(containerId) ?? simulatedUsage(undefined, undefined, undefined);
  }

  async pullImage(image: string): Promise<string> {
    this.checkOpen();
    const normalized = normalizeImage(image);
    await delay(this.options.pullDelayMs);
    if (this.failImages.has(normalized)) throw new RuntimeError('SKIFF_ERR_CRI_IMAGE_PULL', { image: normalized }, 'ErrImagePull');
    const id = imageDigest(image);
    this.images.set(normalized, { id, repoTags: [normalized], size: imageSize(image) });
    return id;
  }

  async imageStatus(image: string): Promise<{ id: string; repoTags: string[]; size: number } | undefined> {
    const held = this.images.get(normalizeImage(image));
    return held && structuredClone(held);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.exits.values()) clearTimeout(timer);
    this.exits.clear();
    this.sandboxes.clear();
    this.containers.clear();
    this.usages.clear();
    await this.logs?.removeAll();
  }

  /**
   * Created or running → exited (stopped, or its simulated process ended) with `exitCode`: reason
   * `Completed` for 0, `Error` otherwise, as containerd reports them; exited stays as it was.
   */
  private exit(container: ContainerStatusInfo, exitCode = 0): void {
    this.forgetExit(container.id);
    if (container.state === 'CONTAINER_EXITED') return;
    const finishedAt = Date.now();
    if (container.state === 'CONTAINER_RUNNING')
      this.endedCpuNanoSeconds += simulatedStats(container, container.startedAt ?? finishedAt, this.usageOf(container.id), finishedAt).cpuCoreNanoSeconds ?? 0;
    container.state = 'CONTAINER_EXITED';
    container.finishedAt = finishedAt;
    container.exitCode = exitCode;
    container.reason = exitCode === 0 ? 'Completed' : 'Error';
  }

  private forgetExit(containerId: string): void {
    clearTimeout(this.exits.get(containerId));
    this.exits.delete(containerId);
  }

  private alreadyRemoved(kind: 'sandbox' | 'container', id: string): void {
    if (!this.removed.has(id)) throw new RuntimeError('SKIFF_ERR_CRI_NOT_FOUND', { kind, id });
  }

  private checkOpen(): void {
    if (this.closed) throw new RuntimeError('SKIFF_ERR_CRI_CLOSED', {});
  }
}

/** The seconds of `sleep N` when that is all a container runs (directly or as a shell's one command); else undefined. */
export function sleepSeconds(argv: readonly string[]): number | undefined {
  let words = argv;
  if (words.length === 3 && /(^|\/)(ba)?sh$/.test(words[0]!) && words[1] === '-c') words = words[2]!.trim().split(/\s+/);
  if (words.length === 2 && /(^|\/)sleep$/.test(words[0]!) && /^\d+(\.\d+)?$/.test(words[1]!)) return Number(words[1]);
  return undefined;
}

/** `true` and `false` (alone, or as a shell's one command) end at once, with 0 and 1: an init container running `false` fails. */
export function immediateExit(argv: readonly string[]): number | undefined {
  let words = argv;
  if (words.length === 3 && /(^|\/)(ba)?sh$/.test(words[0]!) && words[1] === '-c') words = words[2]!.trim().split(/\s+/);
  if (words.length !== 1) return undefined;
  if (/(^|\/)true$/.test(words[0]!)) return 0;
  if (/(^|\/)false$/.test(words[0]!)) return 1;
  return undefined;
}
