import type { Node, Pod } from '@skiff/api';
import type { ApiClient } from './client.js';
import type { Logger } from './logger.js';

/** What a runtime or network factory learns about the node it serves. */
export interface NodeContext {
  nodeName: string;
  /** 0-based position of this node in the process (for --nodes N). */
  index: number;
  /** A folder this node may keep state in. */
  dataDir: string;
  logger: Logger;
  /**
   * The pod range the cluster gave this node (its Node's `spec.podCIDR`, from the node IPAM controller), when the
   * kubelet waited for one; a network hands addresses from it instead of choosing a range by `index`.
   */
  podCIDR?: string;
}

// ---- CRI shape (runtime.v1.RuntimeService / ImageService), in TypeScript terms -------------------------

/** Which namespace a container shares: the pod's, its own, or the node's (CRI NamespaceMode). */
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';

export interface NamespaceOptions {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
}

export interface PodSandboxConfig {
  metadata: { name: string; uid: string; namespace: string; attempt: number };
  hostname?: string;
  logDirectory?: string;
  dnsConfig?: { servers?: string[]; searches?: string[]; options?: string[] };
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  portMappings?: { protocol?: string; containerPort: number; hostPort?: number; hostIp?: string }[];
  linux?: {
    cgroupParent?: string;
    sysctls?: Record<string, string>;
    securityContext?: { namespaceOptions?: NamespaceOptions; privileged?: boolean; runAsUser?: number; supplementalGroups?: number[] };
  };
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

/** A host path bind-mounted into a container (volumes, the termination-log file, /etc/hosts). */
export interface ContainerMount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
  propagation?: 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';
}

/** cgroup settings from requests and limits (CRI LinuxContainerResources). */
export interface LinuxContainerResources {
  cpuPeriod?: number;
  cpuQuota?: number;
  cpuShares?: number;
  memoryLimitInBytes?: number;
  oomScoreAdj?: number;
}

export interface ContainerConfig {
  metadata: { name: string; attempt: number };
  image: { image: string };
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: { key: string; value: string }[];
  mounts?: ContainerMount[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Relative to the sandbox's logDirectory, as CRI has it ("<container>/<attempt>.log"). */
  logPath?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: {
    resources?: LinuxContainerResources;
    securityContext?: {
      namespaceOptions?: NamespaceOptions;
      privileged?: boolean;
      runAsUser?: number;
      runAsGroup?: number;
      /** Groups the container's processes belong to besides their primary one: the pod's supplementalGroups and fsGroup. */
      supplementalGroups?: number[];
      readonlyRootfs?: boolean;
      /** no_new_privs for the container's processes (setuid binaries do not raise privileges). */
      noNewPrivs?: boolean;
      capabilities?: { addCapabilities?: string[]; dropCapabilities?: string[] };
    };
  };
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
  annotations?: Record<string, string>;
  /** The host file the runtime writes the container's output to (CRI log format), when it keeps one. */
  logPath?: string;
}

/** Registry credentials for a pull (CRI AuthConfig), from a pod's imagePullSecrets. */
export interface ImageAuth {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

/** What ExecSync answers: the command's output and exit code. */
export interface ExecSyncResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

/** An exec or attach session the runtime's streaming server will serve at the URL it returns. */
export interface StreamRequest {
  containerId: string;
  cmd?: string[];
  tty?: boolean;
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
}

// ---- resource usage (CRI ContainerStats, the node's totals) --------------------------------------

/**
 * A container's usage as the runtime reads it (CRI ContainerStats): cumulative CPU time and current memory figures at
 * one moment. The kubelet turns two of these into a rate.
 */
export interface ContainerStatsInfo {
  id: string;
  podSandboxId?: string;
  metadata: ContainerConfig['metadata'];
  /** The container's labels: the kubelet finds the pod and container name in them (io.kubernetes.*). */
  labels?: Record<string, string>;
  /** When the figures were read, in milliseconds since the epoch (fractions allowed). */
  timestampMs: number;
  /** CPU time used since the container started, in nanoseconds (usage_core_nano_seconds). */
  cpuCoreNanoSeconds?: number;
  /** Memory the container uses that cannot be reclaimed at once (working_set_bytes): what kubectl top shows. */
  memoryWorkingSetBytes?: number;
  memoryUsageBytes?: number;
  memoryRssBytes?: number;
}

/** The node's own usage at one moment: cumulative CPU time of the whole machine and its memory working set. */
export interface NodeStatsInfo {
  timestampMs: number;
  cpuCoreNanoSeconds: number;
  memoryWorkingSetBytes: number;
  memoryUsageBytes?: number;
  memoryAvailableBytes?: number;
}

export interface ContainerRuntime {
  readonly name: string;
  /**
   * No processes or network behind the containers (the simulated runtime): the kubelet counts HTTP, TCP
   * and gRPC probes and HTTP lifecycle hooks against them as successes instead of dialling fake addresses.
   */
  readonly simulated?: boolean;
  /**
   * True when closing the runtime ends its containers (it started the container runtime itself): the kubelet then
   * stops its pods before closing it, whatever podsOnShutdown says, so their networks and mounts are freed.
   */
  readonly podsEndWithRuntime?: boolean;
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
  /** Pulls an image, with the registry credentials of the pod's image pull secrets when it has some. */
  pullImage(image: string, auth?: ImageAuth): Promise<string>;
  imageStatus(image: string): Promise<{ id: string; repoTags: string[]; size: number } | undefined>;
  /** Runs a command in a running container and waits for it (exec probes, lifecycle hooks). */
  execSync?(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult>;
  /**
   * The runtime's streaming server URLs (CRI Exec / Attach / PortForward): a client upgrades a connection
   * there (SPDY/3.1 or WebSocket) to talk to the process or the pod's ports.
   */
  exec?(request: StreamRequest): Promise<string>;
  attach?(request: StreamRequest): Promise<string>;
  portForward?(sandboxId: string, ports: number[]): Promise<string>;
  /** The usage of every container the runtime runs (CRI ListContainerStats); without it, pods show no usage. */
  listContainerStats?(): Promise<ContainerStatsInfo[]>;
  /**
   * The node's usage, when the runtime decides it (a simulated one); without it the kubelet reads the machine's
   * (cgroup root, /proc) for a runtime with real containers.
   */
  nodeStats?(): Promise<NodeStatsInfo>;
  /** Asks the runtime to reopen a container's log file (after the kubelet rotated it). */
  reopenContainerLog?(containerId: string): Promise<void>;
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
  /** The pod's host ports (CNI `portMappings` capability); networks without port mapping ignore them. */
  portMappings?: { protocol?: string; containerPort: number; hostPort?: number; hostIp?: string }[];
}

export interface NetworkResult {
  cniVersion?: string;
  interfaces?: { name: string; mac?: string; sandbox?: string }[];
  ips: { address: string; gateway?: string }[];
  dns?: { nameservers?: string[]; search?: string[] };
}

/**
 * How the API server reaches a node's kubelet for a pod's logs, exec, attach and port-forward. Each kubelet
 * registers one in `nodeConnections` (a kernel component) under its node name; the API server's pod
 * subresources (log, exec, attach, portforward) look the pod's node up there.
 */
export interface ContainerLogOptions {
  follow?: boolean;
  previous?: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  sinceTime?: string;
  timestamps?: boolean;
  limitBytes?: number;
}

export interface PodRef {
  namespace: string;
  name: string;
  uid: string;
}

/** CPU and memory in use over a recent window, as the kubelet measured them. */
export interface UsageFigures {
  /** When the newer of the two samples was taken (RFC 3339). */
  timestamp: string;
  /**
   * The time between the two samples the CPU rate comes from, in seconds; absent when the source does not say (a
   * remote kubelet's stats Summary).
   */
  windowSeconds?: number;
  /** CPU in use, in billionths of a core (nanocores). */
  cpuNanoCores: number;
  /** Memory working set in bytes. */
  memoryWorkingSetBytes: number;
}

/** A node's resource usage: the node's, and each pod's containers' (only those with two samples yet). */
export interface NodeResourceUsage {
  nodeName: string;
  node?: UsageFigures;
  pods: PodResourceUsage[];
}

export interface PodResourceUsage {
  namespace: string;
  name: string;
  uid: string;
  containers: ({ name: string } & UsageFigures)[];
}

export interface NodeConnection {
  /** The node's and its pods' CPU and memory usage (the kubelet's stats); absent when the node cannot say. */
  resourceUsage?(signal?: AbortSignal): Promise<NodeResourceUsage>;
  /** The container's output as text chunks (ends with the log unless `follow`, then with the signal or the container). */
  containerLogs(pod: PodRef, container: string, options: ContainerLogOptions, signal: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
  /** A streaming URL for a container of the pod (exec and attach) or for the pod's ports (portforward). */
  streamURL(kind: 'exec' | 'attach', pod: PodRef, container: string, request: Omit<StreamRequest, 'containerId'>): Promise<string>;
  portForwardURL(pod: PodRef, ports: number[]): Promise<string>;
}

export interface NodeConnections {
  /** Registers a node's kubelet; the returned function removes it again. */
  register(nodeName: string, connection: NodeConnection): () => void;
  get(nodeName: string): NodeConnection | undefined;
}

export interface PodNetwork {
  readonly name: string;
  /** The pod CIDR this node hands addresses from, written to Node.spec.podCIDR. */
  podCIDR?(): string | undefined;
  add(attachment: NetworkAttachment): Promise<NetworkResult>;
  del(attachment: NetworkAttachment): Promise<void>;
  check?(attachment: NetworkAttachment): Promise<void>;
  /**
   * The cluster's other nodes, each time one comes, goes or changes its range or address: a network that spans hosts
   * routes their pod ranges (to their InternalIPs, say). Nodes on this host (the same InternalIP) are left out.
   */
  peers?(peers: NodePeer[]): Promise<void>;
  close?(): Promise<void>;
}

/** Another node of the cluster, as a pod network sees it. */
export interface NodePeer {
  name: string;
  /** Its Node's `spec.podCIDR`. */
  podCIDR: string;
  /** Its InternalIP. */
  internalIP: string;
}

export interface NetworkFactory {
  name: string;
  create(node: NodeContext): PodNetwork | Promise<PodNetwork>;
}

// ---- service proxies (kube-proxy's place) --------------------------------------------------------

/** What a service proxy learns about the node it carries Service traffic for. */
export interface ServiceProxyContext extends NodeContext {
  /** The node's own addresses (its InternalIP first): NodePorts answer on them. */
  nodeIPs: string[];
  /** The node's pod range (Node.spec.podCIDR), when its network has one. */
  podCIDR?: string;
  /** An API client with the proxy's own identity (`system:kube-proxy`, bound to `system:node-proxier`). */
  client: ApiClient;
}

/**
 * A running service proxy: it follows Services and EndpointSlices and carries traffic for ClusterIPs, NodePorts,
 * external and load-balancer IPs to ready endpoints. Nodes that share a host (several in one process) each get
 * their own `create` call; an implementation that writes host-wide rules shares them between those nodes.
 */
export interface ServiceProxy {
  readonly name: string;
  /** Resolves once the first full sync has been applied (the kubelet waits for it before reporting Ready). */
  synced?(): Promise<void>;
  /** Stops following the API and removes everything this proxy added to the host (the last node of a host). */
  close(): Promise<void>;
}

export interface ServiceProxyFactory {
  name: string;
  create(context: ServiceProxyContext): ServiceProxy | Promise<ServiceProxy>;
}

/** What the kubelet hands a volume plugin with every call: who it runs as and where. */
export interface VolumeContext {
  nodeName: string;
  /** The node's folder (NodeContext.dataDir); pod volume folders live under `<dataDir>/pods/<uid>/volumes`. */
  dataDir: string;
  /**
   * Where the node's own file system is, for volumes that name a path of the node (hostPath, a PersistentVolume's
   * path): `/` on a node with a real container runtime. On a node whose runtime is simulated no container can see
   * the host, so this is a folder under `dataDir` that stands in for it: a pod never makes the cluster create or
   * change anything outside its data dir. Absent means `/`.
   */
  hostRoot?: string;
  /** The kubelet's API client (system:node:<name>): ConfigMaps, Secrets, PersistentVolumeClaims, TokenRequests. */
  client: ApiClient;
  logger: Logger;
  /** The Node as the kubelet last registered it (allocatable, for resourceFieldRef without limits). */
  node(): Node | undefined;
  /** Records an event about the pod (a volume that fell back to something weaker, say). */
  event(type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** What a volume's setUp may answer: where the volume really is, when that is not its folder. */
export interface VolumeSetUpResult {
  /** The host path containers mount instead of the volume folder (hostPath, a PersistentVolume's path). */
  path?: string;
  /** Containers always get the volume read-only (configMap, secret, downwardAPI, projected). */
  readOnly?: boolean;
}

/**
 * A volume type the kubelet can set up (emptyDir, configMap, hostPath…). `setUp` is called before the
 * pod's containers are created and again on every sync of the running pod, so it must be idempotent, and
 * volumes that project API data refresh their files then. `tearDown` runs once the pod's sandbox is gone;
 * after a kubelet restart the pod may be known only by `metadata.uid` (the spec is then empty).
 */
export interface VolumePlugin {
  name: string;
  canSupport(volume: Record<string, unknown>): boolean;
  setUp(pod: Pod, volume: Record<string, unknown>, dir: string, context?: VolumeContext): Promise<void | VolumeSetUpResult>;
  tearDown(pod: Pod, volumeName: string, dir: string, context?: VolumeContext): Promise<void>;
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
