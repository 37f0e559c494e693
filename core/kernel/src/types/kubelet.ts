import type { Node, Pod } from '@skiff/api';
import type { Logger } from './logger.js';

/** What a runtime or network factory learns about the node it serves. */
export interface NodeContext {
  nodeName: string;
  /** 0-based position of this node in the process (for --nodes N). */
  index: number;
  /** A folder this node may keep state in. */
  dataDir: string;
  logger: Logger;
}

// ---- CRI shape (runtime.v1.RuntimeService / ImageService), in TypeScript terms -------------------------

export interface PodSandboxConfig {
  metadata: { name: string; uid: string; namespace: string; attempt: number };
  hostname?: string;
  logDirectory?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  portMappings?: { protocol?: string; containerPort: number; hostPort?: number; hostIp?: string }[];
}

export type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerRuntimeState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxConfig['metadata'];
  state: SandboxState;
  createdAt: number;
  /** Network namespace path for CNI ("/var/run/netns/…"). */
  netnsPath?: string;
  network?: { ip: string; additionalIps?: string[] };
  labels?: Record<string, string>;
}

export interface ContainerConfig {
  metadata: { name: string; attempt: number };
  image: { image: string };
  command?: string[];
  args?: string[];
  envs?: { key: string; value: string }[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  logPath?: string;
}

export interface ContainerStatusInfo {
  id: string;
  podSandboxId: string;
  metadata: ContainerConfig['metadata'];
  state: ContainerRuntimeState;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  exitCode?: number;
  image: { image: string };
  imageRef: string;
  reason?: string;
  message?: string;
  labels?: Record<string, string>;
}

export interface ContainerRuntime {
  readonly name: string;
  version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }>;
  runPodSandbox(config: PodSandboxConfig): Promise<string>;
  stopPodSandbox(sandboxId: string): Promise<void>;
  removePodSandbox(sandboxId: string): Promise<void>;
  podSandboxStatus(sandboxId: string): Promise<PodSandboxStatus | undefined>;
  listPodSandbox(filter?: { labelSelector?: Record<string, string> }): Promise<PodSandboxStatus[]>;
  createContainer(sandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string>;
  startContainer(containerId: string): Promise<void>;
  stopContainer(containerId: string, timeoutSeconds: number): Promise<void>;
  removeContainer(containerId: string): Promise<void>;
  containerStatus(containerId: string): Promise<ContainerStatusInfo | undefined>;
  listContainers(filter?: { podSandboxId?: string }): Promise<ContainerStatusInfo[]>;
  pullImage(image: string): Promise<string>;
  imageStatus(image: string): Promise<{ id: string; repoTags: string[]; size: number } | undefined>;
  /** Releases runtime resources when the node stops. */
  close?(): Promise<void>;
}

export interface RuntimeFactory {
  name: string;
  create(node: NodeContext): ContainerRuntime | Promise<ContainerRuntime>;
}

// ---- CNI shape (ADD / DEL / CHECK) -----------------------------------------------------------------

export interface NetworkAttachment {
  containerId: string;
  netnsPath: string;
  ifName: string;
  podName: string;
  podNamespace: string;
  podUid: string;
  /**
   * An address to hand out if the network can (the pod's previous podIP), so a pod recreated after a
   * restart keeps its IP. Networks that cannot honour it ignore it.
   */
  preferredIP?: string;
}

export interface NetworkResult {
  cniVersion?: string;
  interfaces?: { name: string; mac?: string; sandbox?: string }[];
  ips: { address: string; gateway?: string }[];
  dns?: { nameservers?: string[]; search?: string[] };
}

export interface PodNetwork {
  readonly name: string;
  /** The pod CIDR this node hands addresses from, written to Node.spec.podCIDR. */
  podCIDR?(): string | undefined;
  add(attachment: NetworkAttachment): Promise<NetworkResult>;
  del(attachment: NetworkAttachment): Promise<void>;
  check?(attachment: NetworkAttachment): Promise<void>;
  close?(): Promise<void>;
}

export interface NetworkFactory {
  name: string;
  create(node: NodeContext): PodNetwork | Promise<PodNetwork>;
}

export interface VolumePlugin {
  name: string;
  canSupport(volume: Record<string, unknown>): boolean;
  setUp(pod: Pod, volume: Record<string, unknown>, dir: string): Promise<void>;
  tearDown(pod: Pod, volumeName: string, dir: string): Promise<void>;
}

export interface NamedRegistry<T extends { name: string }> {
  register(item: T): void;
  get(name: string): T | undefined;
  list(): T[];
}

export type PodAdmitResult = { reason: string; message: string } | undefined;

export interface PodSyncContext {
  pod: Pod;
  node: Node;
  runtime: ContainerRuntime;
  /** Set by handlers that want the pod's status to say something. */
  reasons: string[];
}
