import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RESOURCES, isApiError, type Node, type Pod, type Service, type UserInfo } from '@skiff/api';
import { assertCanI, EventRecorderImpl, SharedInformerFactory, type SkiffClient } from '@skiff/client';
import type {
  ContainerRuntime,
  Hooks,
  Logger,
  NetworkFactory,
  NodeConnection,
  NodeConnections,
  NodeContext,
  PodNetwork,
  Registry,
  RuntimeFactory,
  ServiceProxy,
  ServiceProxyFactory,
  VolumePlugin,
} from '@skiff/kernel';
import { ApiEnvSources } from './env/env-sources.js';
import { KUBELET_COMPONENT, SIMULATED_HOST_ROOT } from './names.js';
import { hostCapacity } from './node/host-capacity.js';
import { NodeLease } from './node/node-lease.js';
import type { NodeCapacity } from './node/node-object.js';
import { NodeRegistration } from './node/node-registration.js';
import { followPeers } from './node/peers.js';
import { waitForPodCIDR } from './node/pod-cidr.js';
import { CrashLoopBackOff } from './pods/crash-loop-backoff.js';
import { PodDns } from './pods/dns.js';
import { callNamed, namingFailures, type NodePluginIdentity } from './plugin-failures.js';
import { KubeletMetrics } from './metrics.js';
import { PodFiles } from './pods/pod-files.js';
import { PodRuntimeManager } from './pods/pod-runtime.js';
import { PodWorkers } from './pods/pod-workers.js';
import { ActionRunner } from './probes/actions.js';
import { ProbeManager } from './probes/probe-manager.js';
import { VolumeManager } from './volumes/volume-manager.js';
import { KubeletNodeConnection } from './streaming/node-connection.js';
import { requestNodeClientCertificate } from './certificates/request.js';
import { CertificateRotation } from './certificates/rotation.js';
import { newServingCertificate, servingCertificate } from './certificates/serving.js';
import { KubeletServer } from './server/index.js';
import { readHostStats } from './stats/host-usage.js';
import { UsageSampler } from './stats/sampler.js';
import type { UsageSnapshot } from './stats/usage.js';

export interface KubeletConfig {
  nodeName: string;
  /** 0-based position among this process's nodes. */
  index: number;
  /** Where this node keeps state (the network's allocations, say). */
  dataDir: string;
  capacity: NodeCapacity;
  /** Where cpu, memory and ephemeral-storage come from: the config (`capacity`) or this machine. */
  capacitySource?: 'config' | 'host';
  heartbeatSeconds: number;
  leaseDurationSeconds: number;
  podResyncSeconds: number;
  /** How often resource usage is read (default 10 s). */
  housekeepingSeconds?: number;
  /** `stop`: tear every pod down (containers, network, sandbox) when the kubelet stops. */
  podsOnShutdown?: 'keep' | 'stop';
  runtimeFactory: RuntimeFactory;
  networkFactory: NetworkFactory;
  /** The service proxy this node runs (kube-proxy's place), if any. */
  serviceProxyFactory?: ServiceProxyFactory;
  /** The node's InternalIP, its pods' status.hostIP. */
  nodeIP: string;
  /** The volume types this node can set up (registered through the volumes hook). */
  volumePlugins: VolumePlugin[];
  /** The cluster's DNS domain. */
  clusterDomain: string;
  /** The cluster DNS servers pods with dnsPolicy ClusterFirst use (none: they get the node's resolv.conf). */
  clusterDNS: string[];
  /** The node's resolver configuration ('' for none). */
  resolvConf: string;
  /** Crash-loop back-off: the first wait and the longest, in seconds (Kubernetes: 10 and 300). */
  crashLoopBackoffBaseSeconds: number;
  crashLoopBackoffMaxSeconds: number;
  /** The plugins that registered the runtime and the network: their failures name them. */
  runtimePlugin?: string;
  networkPlugin?: string;
  serviceProxyPlugin?: string;
  /** An API client acting as `user` (in-process), or the node's own credentials whoever asks (a joined node). */
  connect(user: UserInfo): SkiffClient;
  /** Serve the kubelet's HTTPS API (a node whose API server runs elsewhere). */
  serve?: KubeletServing;
  /** The node's own client certificate (a joined node), renewed before it expires. */
  credentials?: NodeCredentials;
  /** 'cluster': register the Node first and build the pod network on the range the node IPAM controller gives it. */
  podCIDRSource?: 'network' | 'cluster';
  podCIDRWaitSeconds?: number;
  hooks: Pick<Hooks, 'podAdmit' | 'podSync'>;
  logger: Logger;
  /** Where this kubelet offers the API server its pods' logs, exec, attach and port-forward. */
  connections?: NodeConnections;
  /** The registry its kubelet_* metrics go to (the kernel's `metrics`); several kubelets of a process share its series. */
  metrics?: Registry;
}

/** A joined node's client certificate, and where a renewed one goes (its kubeconfig, the client's connections). */
export interface NodeCredentials {
  certPem: string;
  update(certPem: string, keyPem: string): void;
}

/** How long a client certificate renewal waits for its CSR to be signed before trying again. */
const CLIENT_RENEWAL_WAIT_MS = 5 * 60_000;

function rotating(what: string, certPem: string, logger: Logger, renew: () => Promise<string>): CertificateRotation {
  const rotation = new CertificateRotation(what, renew, logger);
  rotation.start(certPem);
  return rotation;
}

export interface KubeletServing {
  /** Listen address and port (0 picks a free one; the Node reports the port it got). */
  address: string;
  port: number;
  /** The CA whose client certificates the API accepts: the cluster's. */
  clientCaPem: string;
}

/** The identity a node's service proxy acts as: upstream's kube-proxy user, bound to system:node-proxier. */
const SERVICE_PROXY_USER = 'system:kube-proxy';

/**
 * One node's kubelet: registers the Node, keeps its Lease and status heartbeat, and runs pods bound to
 * it through its container runtime and pod network, as system:node:<name>.
 */
export class Kubelet {
  private readonly abort = new AbortController();
  private runtime: ContainerRuntime | undefined;
  private network: PodNetwork | undefined;
  private serviceProxy: ServiceProxy | undefined;
  private informers: SharedInformerFactory | undefined;
  private workers: PodWorkers | undefined;
  private manager: PodRuntimeManager | undefined;
  private volumes: VolumeManager | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private unregister: (() => void) | undefined;
  private server: KubeletServer | undefined;
  private readonly rotations: CertificateRotation[] = [];
  private readonly logger: Logger;
  private stopCounting: (() => void) | undefined;

  constructor(private readonly config: KubeletConfig) {
    this.logger = config.logger.child({ node: config.nodeName });
  }

  async start(): Promise<void> {
    const { nodeName, index, dataDir } = this.config;
    await mkdir(dataDir, { recursive: true });
    const context: NodeContext = { nodeName, index, dataDir, logger: this.logger };
    const { runtimeFactory, networkFactory, runtimePlugin, networkPlugin } = this.config;
    const runtimeIdentity: NodePluginIdentity = { kind: 'container runtime', name: runtimeFactory.name, plugin: runtimePlugin };
    const networkIdentity: NodePluginIdentity = { kind: 'pod network', name: networkFactory.name, plugin: networkPlugin };
    const created = await callNamed(runtimeIdentity, 'create', this.logger, () => runtimeFactory.create(context));
    const metrics = this.config.metrics ? new KubeletMetrics(this.config.metrics) : undefined;
    const runtime = (this.runtime = namingFailures(created, runtimeIdentity, this.logger, metrics));
    // Counted through the runtime itself: a scrape's lists are not runtime operations of the kubelet's.
    this.stopCounting = metrics?.countRunning(created);
    const createNetwork = async (node: NodeContext) => {
      const createdNetwork = await callNamed(networkIdentity, 'create', this.logger, () => networkFactory.create(node));
      return (this.network = namingFailures(createdNetwork, networkIdentity, this.logger));
    };
    // A node whose range the cluster hands out registers first; its network is made once the range has come.
    const fromCluster = this.config.podCIDRSource === 'cluster';
    let network = fromCluster ? undefined : await createNetwork(context);
    const version = await runtime.version();

    const client = this.config.connect({ username: `system:node:${nodeName}`, groups: ['system:nodes', 'system:authenticated'] });
    await assertCanI(client, `system:node:${nodeName}`, { verb: 'update', group: '', resource: 'pods', subresource: 'status' });
    const capacity = this.config.capacitySource === 'host' ? await hostCapacity(dataDir, this.config.capacity.pods) : this.config.capacity;
    const registration = new NodeRegistration(client, {
      name: nodeName,
      capacity,
      containerRuntimeVersion: `${version.runtimeName}://${version.runtimeVersion}`,
      podCIDR: network?.podCIDR?.(),
      internalIP: this.config.nodeIP,
    });
    const lease = new NodeLease(client, nodeName, this.config.leaseDurationSeconds, this.logger);
    await lease.renew(await registration.register());
    this.heartbeat = setInterval(() => void this.beat(registration, lease), this.config.heartbeatSeconds * 1000);
    this.heartbeat.unref();
    if (!network) {
      const podCIDR = await waitForPodCIDR(client, nodeName, (this.config.podCIDRWaitSeconds ?? 120) * 1000, this.abort.signal);
      network = await createNetwork({ ...{}, ...context, podCIDR });
    }
    await this.startServiceProxy(context, network.podCIDR?.());

    const informers = (this.informers = new SharedInformerFactory(client, { logger: this.logger }));
    const pods = informers.informer<Pod>(RESOURCES.pods, { fieldSelector: `spec.nodeName=${nodeName}` });
    if (network.peers)
      followPeers(informers.informer<Node>(RESOURCES.nodes), { name: nodeName, ip: this.config.nodeIP }, network as Required<PodNetwork>, this.logger);
    // Service environment variables come from every Service of a pod's namespace (and default/kubernetes).
    const services = informers.informer<Service>(RESOURCES.services);
    const files = new PodFiles(dataDir);
    const volumes = (this.volumes = new VolumeManager({
      plugins: this.config.volumePlugins,
      files,
      nodeName,
      client,
      node: () => registration.node,
      logger: this.logger,
      refreshMs: this.config.podResyncSeconds * 1000,
      // No container of a simulated runtime sees the machine: its pods' host paths are made in the node's folder.
      hostRoot: runtime.simulated ? join(dataDir, SIMULATED_HOST_ROOT) : '/',
    }));
    const runner = new ActionRunner(runtime);
    const manager = (this.manager = new PodRuntimeManager({
      runtime,
      network,
      hostIP: this.config.nodeIP,
      logger: this.logger,
      files,
      volumes,
      clusterDomain: this.config.clusterDomain,
      env: new ApiEnvSources(client, services),
      node: () => registration.node,
      dns: new PodDns({ clusterDNS: this.config.clusterDNS, clusterDomain: this.config.clusterDomain, resolvConf: this.config.resolvConf }),
      backOff: new CrashLoopBackOff({ initialMs: this.config.crashLoopBackoffBaseSeconds * 1000, maxMs: this.config.crashLoopBackoffMaxSeconds * 1000 }),
      runner,
    }));
    const recorder = new EventRecorderImpl(client, { component: KUBELET_COMPONENT, host: nodeName, logger: this.logger });
    const eventsFor = (pod: Pod) => (type: 'Normal' | 'Warning', reason: string, message: string) => recorder.event(pod, type, reason, message);
    const probes = new ProbeManager({
      runner,
      onChange: (pod) => this.workers?.resync(pod),
      kill: (pod, container, containerId, grace, message) => manager.killContainer(pod, container.name, containerId, grace, eventsFor(pod), message),
      events: eventsFor,
      logger: this.logger,
    });
    this.workers = new PodWorkers({
      nodeName,
      client,
      pods,
      manager,
      volumes,
      probes,
      runtime,
      recorder,
      hooks: this.config.hooks,
      node: () => registration.node,
      hostIP: this.config.nodeIP,
      logger: this.logger,
      resyncMs: this.config.podResyncSeconds * 1000,
      metrics,
    });
    informers.start(this.abort.signal);
    await informers.waitForSync(this.abort.signal);
    // Sandboxes of pods deleted while this kubelet was away have nobody left to clean them up.
    await manager.killOrphans((namespace, name, uid) => pods.get(`${namespace}/${name}`)?.metadata.uid === uid);
    await this.workers.removeOrphanFiles();
    this.workers.start(this.abort.signal);
    // A runtime with real containers and no figures of the node's own gets the machine's (a simulated one has none).
    const sampler = new UsageSampler({
      runtime,
      periodMs: (this.config.housekeepingSeconds ?? 10) * 1000,
      logger: this.logger,
      ...(runtime.simulated ? {} : { hostStats: () => readHostStats() }),
    });
    sampler.start(this.abort.signal);
    const usage = () => sampler.snapshot();
    const connection = new KubeletNodeConnection({
      nodeName,
      runtime,
      pod: (namespace, name) => pods.get(`${namespace}/${name}`),
      signal: this.abort.signal,
      usage,
    });
    this.unregister = this.config.connections?.register(nodeName, connection);
    if (this.config.serve) await this.serve(client, registration, connection, () => pods.list(), usage, this.config.serve);
    if (this.config.credentials) this.rotateClientCertificate(client, this.config.credentials);
    this.logger.info({ runtime: runtime.name, network: network.name, podCIDR: network.podCIDR?.() }, 'kubelet started');
  }

  /** The kubelet's HTTPS API, for an API server in another process: logs, exec, attach, port-forward, pods, stats. */
  private async serve(
    client: SkiffClient,
    registration: NodeRegistration,
    connection: NodeConnection,
    pods: () => Pod[],
    usage: () => UsageSnapshot,
    serve: KubeletServing,
  ): Promise<void> {
    const { nodeName, nodeIP, dataDir } = this.config;
    const node = { name: nodeName, ip: nodeIP, dataDir };
    const certificate = await servingCertificate(client, node, this.abort.signal);
    const server = (this.server = new KubeletServer({
      nodeName,
      connection,
      pods,
      usage,
      client,
      tls: { ...{}, ...certificate, clientCaPem: serve.clientCaPem },
      host: serve.address,
      port: serve.port,
      logger: this.logger,
      metrics: this.config.metrics,
    }));
    const port = await server.listen();
    await registration.servingOn(port);
    this.rotations.push(
      rotating('serving', certificate.certPem, this.logger, async () => {
        const renewed = await newServingCertificate(client, node, this.abort.signal);
        server.setServingCertificate(renewed);
        return renewed.certPem;
      }),
    );
    this.logger.info({ address: serve.address, port }, 'kubelet API serving');
  }

  /** Renews the node's client certificate before it expires (a joined node), through a CSR of its own. */
  private rotateClientCertificate(client: SkiffClient, credentials: NodeCredentials): void {
    const { nodeName } = this.config;
    this.rotations.push(
      rotating('client', credentials.certPem, this.logger, async () => {
        const { certPem, keyPem } = await requestNodeClientCertificate(client, nodeName, { timeoutMs: CLIENT_RENEWAL_WAIT_MS, signal: this.abort.signal });
        credentials.update(certPem, keyPem);
        return certPem;
      }),
    );
  }

  async stop(): Promise<void> {
    for (const rotation of this.rotations.splice(0)) rotation.stop();
    await this.server?.close().catch((err: unknown) => this.logger.warn({ err }, 'closing the kubelet API failed'));
    this.unregister?.();
    this.stopCounting?.();
    this.abort.abort();
    clearInterval(this.heartbeat);
    await this.workers?.stopped();
    await this.informers?.stopped();
    // A runtime whose pods end with it (it started containerd itself) gets them stopped first, so their networks are freed.
    if (this.config.podsOnShutdown === 'stop' || this.runtime?.podsEndWithRuntime) {
      await this.manager?.killOrphans(() => false).catch((err: unknown) => this.logger.warn({ err }, 'stopping pods at shutdown failed'));
      // Nothing uses the volumes once the sandboxes are gone: unmount them (tmpfs emptyDirs) rather than leave them under the data dir.
      await this.volumes?.tearDownAll().catch((err: unknown) => this.logger.warn({ err }, 'tearing down volumes at shutdown failed'));
    }
    await this.serviceProxy?.close().catch((err: unknown) => this.logger.warn({ err }, 'stopping the service proxy failed'));
    await this.runtime?.close?.();
    await this.network?.close?.();
  }

  /** Starts the node's service proxy (if it runs one) with its own identity, and waits for its first sync. */
  private async startServiceProxy(context: NodeContext, podCIDR: string | undefined): Promise<void> {
    const factory = this.config.serviceProxyFactory;
    if (!factory) return;
    const identity: NodePluginIdentity = { kind: 'service proxy', name: factory.name, plugin: this.config.serviceProxyPlugin };
    const client = this.config.connect({ username: SERVICE_PROXY_USER, groups: ['system:authenticated'] });
    const proxy = await callNamed(identity, 'create', this.logger, () => factory.create({ ...{}, ...context, nodeIPs: [this.config.nodeIP], podCIDR, client }));
    this.serviceProxy = proxy;
    await callNamed(identity, 'synced', this.logger, async () => proxy.synced?.());
  }

  private async beat(registration: NodeRegistration, lease: NodeLease): Promise<void> {
    let node;
    try {
      node = await registration.heartbeat();
    } catch (err) {
      if (!isApiError(err, 'NotFound')) return this.logger.warn({ err }, 'node status heartbeat failed');
      this.logger.warn({}, 'the Node object is gone; registering again');
      node = await registration.register().catch((again: unknown) => void this.logger.warn({ err: again }, 'node registration failed'));
      if (!node) return;
    }
    await lease.renew(node).catch((err: unknown) => this.logger.warn({ err }, 'node lease renewal failed'));
  }
}
