import { mkdir, rm } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { errorMessage, parseBytes, type Container, type Node, type Pod } from '@skiff/api';
import type { ContainerRuntime, ContainerStatusInfo, Logger, NetworkAttachment, PodNetwork, PodSandboxConfig, PodSandboxStatus } from '@skiff/kernel';
import { containerEnvironment, expandCommand } from '../env/container-env.js';
import type { EnvSources } from '../env/env-sources.js';
import { lookupIn, expand } from '../env/expansion.js';
import { KubeletError } from '../errors.js';
import { CRI_LABELS, POD_INTERFACE } from '../names.js';
import { VolumeSetUpError, type MountedVolume, type VolumeManager } from '../volumes/volume-manager.js';
import { ContainerConfigError } from './container-config-error.js';
import { containerMounts } from './container-mounts.js';
import { containerConfig, ephemeralContainers, hostPortMappings, sandboxConfig, type ContainerRole } from './cri-config.js';
import type { DnsConfig, DnsWarning, PodDns } from './dns.js';
import { etcHostsContent, nodeHostsFile, writeEtcHosts } from './etc-hosts.js';
import type { ActionRunner } from '../probes/actions.js';
import type { CrashLoopBackOff } from './crash-loop-backoff.js';
import { formatDuration, podDescription, type PodEventSink } from './events.js';
import { ImagePuller, type Waiting } from './image-puller.js';
import { LifecycleHooks } from './lifecycle-hooks.js';
import type { PodFiles } from './pod-files.js';
import { terminationMessage } from './termination-message.js';

/** One container of the pod as the runtime has it after a sync. */
export interface ContainerObservation {
  name: string;
  /** Its latest instance in the runtime, if one was created. */
  status?: ContainerStatusInfo;
  /** The instance before it, if the runtime still has it (the container's lastState). */
  previous?: ContainerStatusInfo;
  restartCount: number;
  /** Why it is not running yet, when that is something to show (ErrImagePull, PodInitializing…). */
  waiting?: Waiting;
  /** What its probes say about the running instance (set by the pod workers; unset: no such probe). */
  started?: boolean;
  ready?: boolean;
}

/** What a sync found and did: the raw material of the pod's status. */
export interface PodObservation {
  sandboxReady: boolean;
  podIP?: string;
  initialized: boolean;
  initContainers: ContainerObservation[];
  containers: ContainerObservation[];
  ephemeralContainers: ContainerObservation[];
  /** Something could not be done yet (an image pull, a container start): sync again after a backoff. */
  incomplete: boolean;
  /** A container waits out its crash-loop back-off: sync again this soon to restart it. */
  retryAfterMs?: number;
}

export interface PodRuntimeOptions {
  runtime: ContainerRuntime;
  network: PodNetwork;
  /** The node's address: the pod IP of hostNetwork pods. */
  hostIP: string;
  logger: Logger;
  /** Where the node keeps pods' folders and logs. */
  files: PodFiles;
  volumes: VolumeManager;
  /** The cluster's DNS domain (pod FQDNs in /etc/hosts). */
  clusterDomain: string;
  /** ConfigMaps, Secrets and Services for containers' environments; Secrets for image pulls. */
  env: EnvSources;
  /** The Node as last registered (allocatable for resourceFieldRef, memory capacity for OOM scores). */
  node: () => Node | undefined;
  /** Works out pods' resolver configurations. */
  dns: PodDns;
  /** Restart back-off of containers that keep exiting (CrashLoopBackOff). */
  backOff: CrashLoopBackOff;
  /** Runs lifecycle hooks (and probes) against containers. */
  runner: ActionRunner;
}

/** terminationGracePeriodSeconds when a pod sets none. */
const DEFAULT_GRACE_SECONDS = 30;
/** What a container is left to stop after its preStop hook took its time (Kubernetes: 2 s). */
const MIN_GRACE_AFTER_HOOK_SECONDS = 2;

/** What one sync of a pod works with once its volumes and sandbox are there. */
interface PodSetting {
  pod: Pod;
  sandbox: PodSandboxStatus;
  sandboxConfig: PodSandboxConfig;
  volumes: ReadonlyMap<string, MountedVolume>;
  podIP: string;
  event: PodEventSink;
}

const noEvents: PodEventSink = () => undefined;

function newest<T extends { createdAt: number }>(items: T[]): T | undefined {
  return items.reduce<T | undefined>((best, item) => (!best || item.createdAt >= best.createdAt ? item : best), undefined);
}

function shouldRestart(pod: Pod, exitCode: number | undefined): boolean {
  const policy = pod.spec.restartPolicy ?? 'Always';
  return policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
}

/**
 * Drives one node's runtime and network for pods, the way the kubelet's runtime manager does over CRI:
 * a sandbox per pod (with its network), then init containers one at a time, then the containers.
 * Every call looks at what the runtime has, so it converges from any state — including a runtime that
 * lost everything in a restart.
 */
export class PodRuntimeManager {
  private readonly puller: ImagePuller;
  /** Pod IP per sandbox id (learned from the network's ADD). */
  private readonly ips = new Map<string, string>();
  /** What each exited container instance left in its termination-log file, by container id. */
  private readonly terminationMessages = new Map<string, string>();

  private readonly hooks: LifecycleHooks;

  constructor(private readonly options: PodRuntimeOptions) {
    this.puller = new ImagePuller(options.runtime, options.env);
    this.hooks = new LifecycleHooks(options.runner);
  }

  async sync(pod: Pod, event: PodEventSink = noEvents): Promise<PodObservation> {
    const { runtime, files } = this.options;
    const uid = pod.metadata.uid!;
    const identity = { namespace: pod.metadata.namespace!, name: pod.metadata.name!, uid };
    await files.prepare(identity);
    let volumes: ReadonlyMap<string, MountedVolume>;
    try {
      volumes = await this.options.volumes.setUp(pod, event);
    } catch (err) {
      if (err instanceof VolumeSetUpError) return this.waitingForVolumes(pod);
      throw err;
    }
    const named = await runtime.listPodSandbox({
      labelSelector: { [CRI_LABELS.POD_NAMESPACE]: pod.metadata.namespace!, [CRI_LABELS.POD_NAME]: pod.metadata.name! },
    });
    // An earlier pod of the same name (deleted and recreated before this worker ran) must not linger.
    for (const previous of named) if (previous.metadata.uid !== uid) await this.killSandbox(previous, 0, event);
    const sandboxes = named.filter((sandbox) => sandbox.metadata.uid === uid);
    const ready = newest(sandboxes.filter((sandbox) => sandbox.state === 'SANDBOX_READY'));
    // A replaced sandbox's address is the one to ask for again (the API status may not have it yet).
    let previousIP = pod.status?.podIP;
    for (const stale of sandboxes) {
      if (stale === ready) continue;
      previousIP ??= this.ips.get(stale.id);
      await this.killSandbox(stale, 0, event);
    }
    const attempt = sandboxes.length ? Math.max(...sandboxes.map((s) => s.metadata.attempt)) + 1 : 0;
    const dns = await this.options.dns.configFor(pod);
    const sandbox = ready ?? (await this.startSandbox(pod, attempt, previousIP, dns, event));
    const podIP = await this.podIP(pod, sandbox);
    const nodeHosts = pod.spec.hostNetwork ? await nodeHostsFile() : '';
    await writeEtcHosts(files.etcHosts(uid), etcHostsContent(pod, [podIP], this.options.clusterDomain, nodeHosts));
    const setting: PodSetting = { pod, sandbox, sandboxConfig: this.sandboxConfig(pod, sandbox.metadata.attempt, dns.config), volumes, podIP, event };

    let incomplete = false;
    let retryAfterMs: number | undefined;
    const waiting = new Map<string, Waiting>();
    /** Shows why a container is not running yet, and has the sync retried. */
    const noteProblem = (container: Container, problem: Waiting | undefined) => {
      if (!problem) return;
      waiting.set(container.name, problem);
      incomplete = true;
    };
    /** Starts a new instance of a container — after its crash-loop back-off, when it is a restart of one that exited. */
    const start = async (container: Container, role: ContainerRole, attempt: number, exited?: ContainerStatusInfo): Promise<void> => {
      if (exited) {
        const key = `${uid}/${container.name}`;
        const finishedAt = exited.finishedAt ?? exited.createdAt;
        const wait = this.options.backOff.remaining(key, finishedAt);
        if (wait > 0) {
          const described = podDescription(pod.metadata);
          const message = `back-off ${formatDuration(this.options.backOff.current(key))} restarting failed container=${container.name} pod=${described}`;
          waiting.set(container.name, { reason: 'CrashLoopBackOff', message });
          event('Warning', 'BackOff', `Back-off restarting failed container ${container.name} in pod ${described}`);
          retryAfterMs = Math.min(retryAfterMs ?? Number.POSITIVE_INFINITY, wait);
          return;
        }
        this.options.backOff.next(key, finishedAt);
      }
      noteProblem(container, await this.startContainer(setting, container, role, attempt));
    };
    /** Starts an instance left created but never started (the kubelet restarted in between, or its start failed). */
    const resume = async (container: Container, instance: ContainerStatusInfo): Promise<void> =>
      noteProblem(container, await this.runCreated(setting, container, instance.id));

    let current = await this.containerInstances(sandbox.id);
    // Ephemeral containers (added through pods/ephemeralcontainers) start whatever the init containers do, each
    // once: one that ran before (in an earlier sandbox too, as the pod's status shows) is not started again.
    for (const container of ephemeralContainers(pod)) {
      const instance = current.get(container.name)?.[0];
      const ranBefore = pod.status?.ephemeralContainerStatuses?.some((status) => status.name === container.name && status.containerID);
      if (!instance && !ranBefore) await start(container, 'ephemeral', 0);
      else if (instance?.state === 'CONTAINER_CREATED') await resume(container, instance);
    }
    if (pod.spec.ephemeralContainers?.length) current = await this.containerInstances(sandbox.id);
    let initialized = true;
    for (const container of pod.spec.initContainers ?? []) {
      // A sidecar (restartPolicy Always) keeps running beside the containers and is restarted whenever it exits.
      const sidecar = container.restartPolicy === 'Always';
      let instance = current.get(container.name)?.[0];
      const role = sidecar ? 'regular' : 'init';
      if (!instance) await start(container, role, this.previousRestarts(pod, container.name, true));
      else if (instance.state === 'CONTAINER_EXITED' && (sidecar || (instance.exitCode !== 0 && shouldRestart(pod, instance.exitCode))))
        await start(container, role, instance.metadata.attempt + 1, instance);
      else if (instance.state === 'CONTAINER_CREATED') await resume(container, instance);
      current = await this.containerInstances(sandbox.id);
      instance = current.get(container.name)?.[0];
      const completed = !sidecar && instance?.state === 'CONTAINER_EXITED' && instance.exitCode === 0;
      const sidecarRunning = sidecar && instance?.state === 'CONTAINER_RUNNING';
      if (!completed && !sidecarRunning) {
        initialized = false;
        break;
      }
    }

    if (initialized) {
      for (const container of pod.spec.containers) {
        const instance = current.get(container.name)?.[0];
        if (!instance) await start(container, 'regular', this.previousRestarts(pod, container.name, false));
        else if (instance.state === 'CONTAINER_EXITED' && shouldRestart(pod, instance.exitCode))
          await start(container, 'regular', instance.metadata.attempt + 1, instance);
        else if (instance.state === 'CONTAINER_CREATED') await resume(container, instance);
      }
      current = await this.containerInstances(sandbox.id);
    }
    current = await this.prune(pod, current);
    const observed = await this.observeContainers(pod, current, initialized, waiting);
    return { sandboxReady: true, podIP, initialized, ...observed, incomplete, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }

  /** Each container of the pod as the runtime has it: its latest and previous instance, or why it waits. */
  private async observeContainers(
    pod: Pod,
    current: Map<string, ContainerStatusInfo[]>,
    initialized: boolean,
    waiting: ReadonlyMap<string, Waiting> = new Map(),
  ): Promise<Pick<PodObservation, 'initContainers' | 'containers' | 'ephemeralContainers'>> {
    const observe = async (container: Container, pending: Waiting): Promise<ContainerObservation> => {
      const [latest, previous] = current.get(container.name) ?? [];
      const status = await this.withTerminationMessage(pod, container, latest);
      const before = await this.withTerminationMessage(pod, container, previous);
      return {
        name: container.name,
        ...(status ? { status } : {}),
        ...(before ? { previous: before } : {}),
        restartCount: status?.metadata.attempt ?? 0,
        ...(waiting.has(container.name) || !status ? { waiting: waiting.get(container.name) ?? pending } : {}),
      };
    };
    const initContainers: ContainerObservation[] = [];
    for (const container of pod.spec.initContainers ?? []) initContainers.push(await observe(container, { reason: 'PodInitializing' }));
    const containers: ContainerObservation[] = [];
    for (const container of pod.spec.containers) containers.push(await observe(container, { reason: initialized ? 'ContainerCreating' : 'PodInitializing' }));
    const ephemeral: ContainerObservation[] = [];
    for (const container of ephemeralContainers(pod)) ephemeral.push(await observe(container, { reason: 'ContainerCreating' }));
    return { initContainers, containers, ephemeralContainers: ephemeral };
  }

  /**
   * Stops what a finished pod still runs (its containers within the grace period, its network and sandbox) and
   * keeps its exited containers, so their logs and statuses stay until the pod is deleted, as upstream's
   * kubelet keeps them. Sandboxes of other pods of the same name go entirely. Answers what the pod's newest
   * sandbox holds afterwards (undefined when the runtime has nothing of it).
   */
  async stopPod(pod: Pod, gracePeriodSeconds: number, event: PodEventSink = noEvents): Promise<PodObservation | undefined> {
    const uid = pod.metadata.uid!;
    const named = await this.options.runtime.listPodSandbox({
      labelSelector: { [CRI_LABELS.POD_NAMESPACE]: pod.metadata.namespace!, [CRI_LABELS.POD_NAME]: pod.metadata.name! },
    });
    for (const other of named) if (other.metadata.uid !== uid) await this.killSandbox(other, 0, event);
    const own = named.filter((sandbox) => sandbox.metadata.uid === uid);
    for (const sandbox of own) await this.stopSandbox(sandbox, gracePeriodSeconds, event, pod);
    const latest = newest(own);
    if (!latest) return undefined;
    const current = await this.containerInstances(latest.id);
    const initialized = (pod.spec.initContainers ?? []).every(
      (container) => container.restartPolicy === 'Always' || current.get(container.name)?.[0]?.exitCode === 0,
    );
    return { sandboxReady: false, initialized, ...(await this.observeContainers(pod, current, initialized)), incomplete: false };
  }

  /** A pod whose volumes are not set up yet: no sandbox, every container waiting in ContainerCreating. */
  private waitingForVolumes(pod: Pod): PodObservation {
    const waiting = (container: Container): ContainerObservation => ({
      name: container.name,
      restartCount: 0,
      waiting: { reason: pod.spec.initContainers?.length ? 'PodInitializing' : 'ContainerCreating' },
    });
    return {
      sandboxReady: false,
      initialized: !pod.spec.initContainers?.length,
      initContainers: (pod.spec.initContainers ?? []).map(waiting),
      containers: pod.spec.containers.map(waiting),
      ephemeralContainers: ephemeralContainers(pod).map(waiting),
      incomplete: true,
    };
  }

  /** An exited instance's status with what the container left in its termination-log file (read once per instance). */
  private async withTerminationMessage(pod: Pod, container: Container, instance: ContainerStatusInfo | undefined): Promise<ContainerStatusInfo | undefined> {
    if (instance?.state !== 'CONTAINER_EXITED') return instance;
    let message = this.terminationMessages.get(instance.id);
    if (message === undefined) {
      const path = this.options.files.terminationLog(pod.metadata.uid!, container.name, instance.metadata.attempt);
      message = (await terminationMessage(container, instance, path)) ?? '';
      this.terminationMessages.set(instance.id, message);
    }
    return message ? { ...{}, ...instance, message } : instance;
  }

  /**
   * Stops and removes everything the runtime holds for the pod (every sandbox with its name), releasing its
   * IPs; answers the uids whose sandboxes it removed. With the pod, its containers' preStop hooks run first.
   */
  async killPod(namespace: string, name: string, gracePeriodSeconds: number, event: PodEventSink = noEvents, pod?: Pod): Promise<string[]> {
    const sandboxes = await this.options.runtime.listPodSandbox({ labelSelector: { [CRI_LABELS.POD_NAMESPACE]: namespace, [CRI_LABELS.POD_NAME]: name } });
    for (const sandbox of sandboxes) await this.killSandbox(sandbox, gracePeriodSeconds, event, pod);
    return [...new Set(sandboxes.map((sandbox) => sandbox.metadata.uid))];
  }

  /**
   * Kills sandboxes of pods this node should not run (deleted while the kubelet was away, say). One that fails
   * does not keep the others running; the first failure is thrown once all were tried.
   */
  async killOrphans(wanted: (namespace: string, name: string, uid: string) => boolean): Promise<void> {
    let first: unknown;
    for (const sandbox of await this.options.runtime.listPodSandbox()) {
      const { namespace, name, uid } = sandbox.metadata;
      if (wanted(namespace, name, uid)) continue;
      this.options.logger.info({ pod: `${namespace}/${name}`, uid }, 'removing the sandbox of a pod that is gone');
      try {
        await this.killSandbox(sandbox, 0, noEvents);
        this.puller.forget(uid);
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }

  forget(uid: string): void {
    this.puller.forget(uid);
    this.options.backOff.forget(`${uid}/`);
  }

  /** The uids of every pod the runtime has a sandbox for. */
  async sandboxUids(): Promise<Set<string>> {
    return new Set((await this.options.runtime.listPodSandbox()).map((sandbox) => sandbox.metadata.uid));
  }

  private sandboxConfig(pod: Pod, attempt: number, dnsConfig: DnsConfig): PodSandboxConfig {
    const { files } = this.options;
    const logDirectory = files.logDirectory({ namespace: pod.metadata.namespace!, name: pod.metadata.name!, uid: pod.metadata.uid! });
    return sandboxConfig(pod, attempt, { logDirectory, dnsConfig });
  }

  /** The node's memory in bytes, as it reports it (the host's when it has not registered yet). */
  private memoryCapacity(): number {
    const memory = this.options.node()?.status?.capacity?.memory;
    return memory === undefined ? totalmem() : parseBytes(memory);
  }

  /** The instances of each container of a sandbox, by container name, newest first. */
  private async containerInstances(sandboxId: string): Promise<Map<string, ContainerStatusInfo[]>> {
    const instances = new Map<string, ContainerStatusInfo[]>();
    for (const container of await this.options.runtime.listContainers({ podSandboxId: sandboxId })) {
      const list = instances.get(container.metadata.name) ?? [];
      list.push(container);
      instances.set(container.metadata.name, list);
    }
    for (const list of instances.values()) list.sort((a, b) => b.metadata.attempt - a.metadata.attempt);
    return instances;
  }

  /**
   * Removes exited instances older than the previous one of each container (Kubernetes keeps one dead
   * instance a container, for `kubectl logs --previous` and lastState), with their termination-log files.
   */
  private async prune(pod: Pod, instances: Map<string, ContainerStatusInfo[]>): Promise<Map<string, ContainerStatusInfo[]>> {
    for (const [name, list] of instances) {
      for (const old of list.slice(2)) {
        if (old.state !== 'CONTAINER_EXITED') continue;
        await this.options.runtime.removeContainer(old.id);
        this.terminationMessages.delete(old.id);
        await rm(this.options.files.terminationLog(pod.metadata.uid!, name, old.metadata.attempt), { force: true });
      }
      instances.set(name, list.slice(0, 2));
    }
    return instances;
  }

  /**
   * The restart count a container starts with when the runtime has no trace of it: if the API status says
   * it ran before (the node restarted and the runtime forgot), this start is a restart.
   */
  private previousRestarts(pod: Pod, name: string, init: boolean): number {
    const statuses = init ? pod.status?.initContainerStatuses : pod.status?.containerStatuses;
    const previous = statuses?.find((status) => status.name === name);
    return previous?.containerID ? previous.restartCount + 1 : 0;
  }

  private attachment(sandbox: PodSandboxStatus, preferredIP?: string): NetworkAttachment {
    return {
      containerId: sandbox.id,
      netnsPath: sandbox.netnsPath ?? '',
      ifName: POD_INTERFACE,
      podName: sandbox.metadata.name,
      podNamespace: sandbox.metadata.namespace,
      podUid: sandbox.metadata.uid,
      ...(preferredIP ? { preferredIP } : {}),
    };
  }

  private async startSandbox(
    pod: Pod,
    attempt: number,
    preferredIP: string | undefined,
    dns: { config: DnsConfig; warnings: DnsWarning[] },
    event: PodEventSink,
  ): Promise<PodSandboxStatus> {
    const { runtime, network, logger } = this.options;
    for (const [reason, message] of dns.warnings) event('Warning', reason, message);
    let id: string | undefined;
    let sandbox: PodSandboxStatus | undefined;
    try {
      id = await runtime.runPodSandbox(this.sandboxConfig(pod, attempt, dns.config));
      sandbox = (await runtime.podSandboxStatus(id))!;
      if (!pod.spec.hostNetwork) await this.addNetwork(pod, sandbox, preferredIP);
      return sandbox;
    } catch (err) {
      event('Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${errorMessage(err)}`);
      // Best effort, each step on its own: the original failure is the one to report.
      const rollbackFailed = (step: string) => (cause: unknown) =>
        logger.warn({ err: cause, pod: `${pod.metadata.namespace}/${pod.metadata.name}`, sandbox: id }, `rolling back a failed sandbox start: ${step} failed`);
      // ADD may have succeeded (or half-succeeded) before the failure: release its IP, cached result and port rules.
      if (sandbox && !pod.spec.hostNetwork) {
        this.ips.delete(sandbox.id);
        await network.del(this.attachment(sandbox)).catch(rollbackFailed('network DEL'));
      }
      if (id) {
        await runtime.stopPodSandbox(id).catch(rollbackFailed('stopping the sandbox'));
        await runtime.removePodSandbox(id).catch(rollbackFailed('removing the sandbox'));
      }
      throw err;
    }
  }

  private async addNetwork(pod: Pod, sandbox: PodSandboxStatus, preferredIP = pod.status?.podIP): Promise<string> {
    const { network } = this.options;
    const portMappings = hostPortMappings(pod);
    const result = await network.add({ ...{}, ...this.attachment(sandbox, preferredIP), ...(portMappings.length ? { portMappings } : {}) });
    const address = result.ips[0]?.address.split('/')[0];
    if (!address) throw new KubeletError('SKIFF_ERR_KUBELET_NETWORK_NO_IP', { name: network.name, pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
    this.ips.set(sandbox.id, address);
    return address;
  }

  /** The pod's IP as its status has it (the node's on the host network), for hooks of a pod being stopped. */
  private podIPOf(pod: Pod): string | undefined {
    return pod.spec.hostNetwork ? this.options.hostIP : pod.status?.podIP;
  }

  /** The pod's IP; a sandbox from before a kubelet restart asks the network again (ADD is idempotent). */
  private async podIP(pod: Pod, sandbox: PodSandboxStatus): Promise<string> {
    if (pod.spec.hostNetwork) return this.options.hostIP;
    return this.ips.get(sandbox.id) ?? (await this.addNetwork(pod, sandbox));
  }

  private async startContainer(setting: PodSetting, container: Container, role: ContainerRole, attempt: number): Promise<Waiting | undefined> {
    const { runtime, files } = this.options;
    const { pod, sandbox, event } = setting;
    const pulling = await this.puller.ensure(pod, container, event);
    if (pulling) return pulling;
    let config;
    try {
      config = await this.containerConfig(setting, container, role, attempt);
    } catch (err) {
      if (!(err instanceof ContainerConfigError)) throw err;
      event('Warning', 'Failed', `Error: ${err.message}`);
      return { reason: 'CreateContainerConfigError', message: err.message };
    }
    await mkdir(join(setting.sandboxConfig.logDirectory ?? files.logDirectory(sandbox.metadata), container.name), { recursive: true, mode: 0o755 });
    let id: string;
    try {
      id = await runtime.createContainer(sandbox.id, config, setting.sandboxConfig);
    } catch (err) {
      event('Warning', 'Failed', `Error: ${errorMessage(err)}`);
      return { reason: 'CreateContainerError', message: errorMessage(err) };
    }
    event('Normal', 'Created', `Created container ${container.name}`);
    return this.runCreated(setting, container, id);
  }

  /** Starts a created container instance, then runs its postStart hook; a failed start is a RunContainerError. */
  private async runCreated(setting: PodSetting, container: Container, id: string): Promise<Waiting | undefined> {
    const { pod, event } = setting;
    try {
      await this.options.runtime.startContainer(id);
    } catch (err) {
      event('Warning', 'Failed', `Error: failed to start container "${container.name}": ${errorMessage(err)}`);
      return { reason: 'RunContainerError', message: errorMessage(err) };
    }
    event('Normal', 'Started', `Started container ${container.name}`);
    const postStart = container.lifecycle?.postStart;
    if (postStart) {
      const grace = pod.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
      const failed = await this.hooks.run(postStart, { pod, container, containerId: id, podIP: setting.podIP }, grace);
      if (failed) {
        event('Warning', 'FailedPostStartHook', failed);
        await this.killContainer(pod, container.name, id, grace, event, 'FailedPostStartHook');
        return { reason: 'PostStartHookError', message: failed };
      }
    }
    return undefined;
  }

  /** The CRI config of a container instance: its environment, expanded command, and mounts (volumes, /etc/hosts, termination log). */
  private async containerConfig(setting: PodSetting, container: Container, role: ContainerRole, attempt: number) {
    const { files, hostIP } = this.options;
    const { pod, podIP, event } = setting;
    const uid = pod.metadata.uid!;
    const placement = { podIPs: [podIP], hostIPs: [hostIP], allocatable: this.options.node()?.status?.allocatable };
    const env = await containerEnvironment(pod, container, this.options.env, placement, event);
    const lookup = lookupIn(env);
    const mounts = await containerMounts(
      container,
      setting.volumes,
      { etcHosts: files.etcHosts(uid), terminationLog: files.terminationLog(uid, container.name, attempt) },
      (text) => expand(text, lookup),
    );
    return containerConfig(pod, container, attempt, role, { mounts, env, ...expandCommand(container, env), memoryCapacity: this.memoryCapacity() });
  }

  /**
   * Stops a container within the grace period: its preStop hook first (when the pod is known and there is
   * time), then the runtime's stop — SIGTERM, and SIGKILL when the rest of the grace period is over — with at
   * least 2 seconds left after a hook.
   */
  async killContainer(
    pod: Pod | undefined,
    name: string,
    containerId: string,
    gracePeriodSeconds: number,
    event: PodEventSink,
    message = `Stopping container ${name}`,
  ): Promise<void> {
    event('Normal', 'Killing', message);
    let grace = gracePeriodSeconds;
    const spec = pod && [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((container) => container.name === name);
    const preStop = spec?.lifecycle?.preStop;
    if (pod && spec && preStop && grace > 0) {
      const began = Date.now();
      const failed = await this.hooks.run(preStop, { pod, container: spec, containerId, podIP: this.podIPOf(pod) }, grace);
      if (failed) event('Warning', 'FailedPreStopHook', failed);
      grace = Math.max(MIN_GRACE_AFTER_HOOK_SECONDS, grace - Math.floor((Date.now() - began) / 1000));
    }
    await this.options.runtime.stopContainer(containerId, grace);
  }

  /** Stops the sandbox and removes it with its containers. */
  private async killSandbox(sandbox: PodSandboxStatus, gracePeriodSeconds: number, event: PodEventSink, pod?: Pod): Promise<void> {
    const containers = await this.options.runtime.listContainers({ podSandboxId: sandbox.id });
    for (const container of containers) this.terminationMessages.delete(container.id);
    await this.stopSandbox(sandbox, gracePeriodSeconds, event, pod, containers);
    await this.options.runtime.removePodSandbox(sandbox.id);
  }

  /** Stops the containers (in parallel), takes the sandbox off the network and stops it (the CRI/CNI teardown order). */
  private async stopSandbox(
    sandbox: PodSandboxStatus,
    gracePeriodSeconds: number,
    event: PodEventSink,
    pod?: Pod,
    listed?: ContainerStatusInfo[],
  ): Promise<void> {
    const { runtime, network } = this.options;
    const containers = listed ?? (await runtime.listContainers({ podSandboxId: sandbox.id }));
    const owner = pod?.metadata.uid === sandbox.metadata.uid ? pod : undefined;
    await Promise.all(
      containers
        .filter((container) => container.state !== 'CONTAINER_EXITED')
        .map((container) => this.killContainer(owner, container.metadata.name, container.id, gracePeriodSeconds, event)),
    );
    await network.del(this.attachment(sandbox));
    this.ips.delete(sandbox.id);
    await runtime.stopPodSandbox(sandbox.id);
  }
}
