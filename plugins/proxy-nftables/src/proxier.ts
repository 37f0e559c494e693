import { performance } from 'node:perf_hooks';
import { RESOURCES, type EndpointSlice, type KubeObject, type ResourceTypes, type Service } from '@skiff/api';
import { canI, SharedInformerFactory } from '@skiff/client';
import type { ApiClient, Informer, Logger } from '@skiff/kernel';
import { ProxyError } from './errors.js';
import type { HostCommands } from './host.js';
import { isIPv4, servicePorts, usableEndpoints, type ServicePortInfo } from './model.js';
import { RETRY_INITIAL_MS, RETRY_MAX_MS, SERVICE_NAME_LABEL } from './names.js';
import { ElementIndex, fullSyncScript, incrementalScript, serviceFragment, type Fragment, type FragmentChange, type RulesConfig } from './rules.js';

type ServiceCIDRObject = ResourceTypes['servicecidrs.networking.k8s.io'];

export interface ProxierSettings extends RulesConfig {
  /** Fixed service ranges; without them the ServiceCIDR objects say. */
  serviceCIDRs?: readonly string[];
  /** The shortest time between two syncs: changes arriving closer together are applied together. */
  minSyncIntervalMs: number;
  /** How often the whole table is written again, repairing whatever changed it behind our back (0: never). */
  fullSyncMs: number;
}

type FullSync = 'fresh' | 'repair';

const objectKey = (object: KubeObject) => `${object.metadata.namespace}/${object.metadata.name}`;
const sliceService = (slice: EndpointSlice) => {
  const name = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return name ? `${slice.metadata.namespace}/${name}` : undefined;
};

/**
 * The sync loop of one table: follows Services, EndpointSlices and ServiceCIDRs and keeps `ip <table>` in step,
 * one nft transaction per sync. The first sync writes the table anew; later ones rewrite only the Services that
 * changed; a periodic flushing full sync repairs drift, and a failed transaction is followed by a fresh one.
 */
export class Proxier {
  private readonly abort = new AbortController();
  private readonly nodes = new Map<string, string[]>();
  private readonly informers: SharedInformerFactory;
  private services!: Informer<Service>;
  private slices!: Informer<EndpointSlice>;
  private serviceCIDRObjects: Informer<ServiceCIDRObject> | undefined;

  private fragments = new Map<string, Fragment>();
  private ports = new Map<string, ServicePortInfo[]>();
  private index = new ElementIndex();
  private appliedRanges: string[] = [];

  private readonly dirty = new Set<string>();
  private rangesDirty = false;
  private fullNeeded: FullSync | undefined = 'fresh';
  /** When the oldest change not yet applied arrived (for the "change → rules" latency in the logs). */
  private changedAt: number | undefined;
  private started = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private periodic: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private lastSyncEnd = 0;
  private retryMs = RETRY_INITIAL_MS;
  private notBefore = 0;
  private lastNftMs = 0;
  private firstSync: { promise: Promise<void>; resolve(): void; reject(err: Error): void; settled: boolean };

  constructor(
    private readonly client: ApiClient,
    private readonly commands: HostCommands,
    private readonly settings: ProxierSettings,
    private readonly logger: Logger,
  ) {
    this.informers = new SharedInformerFactory(client, { resyncMs: 0, logger });
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // A caller that never asks must not see an unhandled rejection.
    promise.catch(() => undefined);
    this.firstSync = { promise, resolve, reject, settled: false };
  }

  /** Resolves after the first full sync was applied; rejects if it failed (later attempts go on regardless). */
  synced(): Promise<void> {
    return this.firstSync.promise;
  }

  /** A node of this host joins: its name makes endpoints local, its addresses answer NodePorts. */
  addNode(name: string, ips: readonly string[]): void {
    // As in upstream's nftables mode, NodePorts do not answer on 127.0.0.0/8: DNAT from a loopback source cannot leave the host.
    const loopback = ips.filter((ip) => ip.startsWith('127.'));
    if (loopback.length)
      this.logger.warn(
        { node: name, addresses: loopback },
        "NodePorts do not answer on loopback addresses; give the node a routable nodeIP (kubelet option nodeIP: 'host')",
      );
    this.nodes.set(
      name,
      ips.filter((ip) => isIPv4(ip) && !ip.startsWith('127.')),
    );
    if (this.started) this.requestFull('repair');
  }

  removeNode(name: string): void {
    if (this.nodes.delete(name) && this.started && this.nodes.size) this.requestFull('repair');
  }

  get nodeCount(): number {
    return this.nodes.size;
  }

  /** Sets the sysctls, starts following the API; the first sync follows once the caches are filled. */
  async start(): Promise<void> {
    await this.commands.sysctl('net.ipv4.ip_forward', '1');
    // Pods on one bridge reply to each other bridged: only with this do those replies meet the nat hooks (and get un-DNATed).
    await this.commands.sysctl('net.bridge.bridge-nf-call-iptables', '1', true);
    if (!this.commands.hasConntrack)
      this.logger.warn({}, 'conntrack not found on PATH: UDP flows to removed endpoints are not cleared (Debian package conntrack)');

    this.services = this.informers.informer<Service>(RESOURCES.services);
    this.slices = this.informers.informer<EndpointSlice>(RESOURCES.endpointslices);
    this.slices.addIndex(SERVICE_NAME_LABEL, (slice) => {
      const key = sliceService(slice);
      return key ? [key] : [];
    });
    if (!this.settings.serviceCIDRs) {
      const access = await canI(this.client, { verb: 'watch', group: 'networking.k8s.io', resource: 'servicecidrs' }).catch(() => ({ allowed: false }));
      if (access.allowed) this.serviceCIDRObjects = this.informers.informer<ServiceCIDRObject>(RESOURCES.servicecidrs);
      else this.logger.warn({}, 'may not watch servicecidrs (networking.k8s.io): addresses of the service ranges that no Service holds are not refused');
    }
    this.services.addHandlers({
      add: (service) => this.changed(objectKey(service)),
      update: (old, service) => old.metadata.resourceVersion !== service.metadata.resourceVersion && this.changed(objectKey(service)),
      delete: (service) => this.changed(objectKey(service)),
    });
    const sliceChanged = (slice: EndpointSlice) => {
      const key = sliceService(slice);
      if (key) this.changed(key);
    };
    this.slices.addHandlers({
      add: sliceChanged,
      update: (old, slice) => {
        if (old.metadata.resourceVersion === slice.metadata.resourceVersion) return;
        if (sliceService(old) !== sliceService(slice)) sliceChanged(old);
        sliceChanged(slice);
      },
      delete: sliceChanged,
    });
    this.serviceCIDRObjects?.addHandlers({ add: () => this.rangesChanged(), update: () => this.rangesChanged(), delete: () => this.rangesChanged() });
    this.informers.start(this.abort.signal);
    void this.informers.waitForSync(this.abort.signal).then(
      () => {
        this.started = true;
        if (this.settings.fullSyncMs > 0) {
          this.periodic = setInterval(() => this.requestFull('repair'), this.settings.fullSyncMs);
          this.periodic.unref();
        }
        this.schedule(0);
      },
      () => undefined,
    );
  }

  /** Stops syncing and removes the table. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    clearTimeout(this.timer);
    clearInterval(this.periodic);
    await this.running;
    await this.informers.stopped();
    this.commands.close();
    const problem = await this.commands.nft(`add table ip ${this.settings.table}\ndelete table ip ${this.settings.table}\n`);
    if (problem) throw new ProxyError('SKIFF_ERR_PROXY_NFT_FAILED', { kind: 'removal', table: this.settings.table, detail: firstLines(problem) });
    if (!this.firstSync.settled) this.firstSync.reject(new Error('the service proxy stopped before its first sync'));
  }

  private changed(key: string): void {
    this.dirty.add(key);
    this.changedAt ??= performance.now();
    if (this.started) this.schedule();
  }

  private rangesChanged(): void {
    this.rangesDirty = true;
    this.changedAt ??= performance.now();
    if (this.started) this.schedule();
  }

  private requestFull(kind: FullSync): void {
    if (this.fullNeeded !== 'fresh') this.fullNeeded = kind;
    this.schedule();
  }

  private schedule(delayMs?: number): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const now = performance.now();
    const wait = delayMs ?? Math.max(0, this.lastSyncEnd + this.settings.minSyncIntervalMs - now, this.notBefore - now);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.sync().finally(() => {
        this.running = undefined;
        this.lastSyncEnd = performance.now();
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
    }, wait);
  }

  private serviceCIDRs(): string[] {
    if (this.settings.serviceCIDRs) return [...this.settings.serviceCIDRs];
    const cidrs = (this.serviceCIDRObjects?.list() ?? []).flatMap((object) => object.spec?.cidrs ?? []);
    return [...new Set(cidrs.filter((cidr) => isIPv4(cidr.split('/')[0])))].sort();
  }

  private localNodes(): Set<string> {
    return new Set(this.nodes.keys());
  }

  private portsOf(key: string): ServicePortInfo[] | undefined {
    const service = this.services.get(key);
    if (!service) return undefined;
    const ports = servicePorts(service, this.slices.byIndex(SERVICE_NAME_LABEL, key));
    return ports.length ? ports : undefined;
  }

  private async sync(): Promise<void> {
    const since = this.changedAt;
    this.changedAt = undefined;
    const started = performance.now();
    const full = this.fullNeeded;
    let kind: string = full ?? 'partial';
    let services = 0;
    let conntrack: string[][] = [];
    try {
      if (full) {
        this.fullNeeded = undefined;
        this.dirty.clear();
        this.rangesDirty = false;
        const ports = new Map<string, ServicePortInfo[]>();
        const fragments = new Map<string, Fragment>();
        const index = new ElementIndex();
        const local = this.localNodes();
        for (const service of this.services.list()) {
          const key = objectKey(service);
          const servicePortList = this.portsOf(key);
          if (!servicePortList) continue;
          const fragment = serviceFragment(servicePortList, local, this.settings);
          ports.set(key, servicePortList);
          fragments.set(key, fragment);
          index.replace(key, [], fragment.elements);
        }
        const ranges = this.serviceCIDRs();
        const script = fullSyncScript(this.settings, {
          fresh: full === 'fresh',
          nodeIPs: [...this.nodes.values()].flat(),
          serviceCIDRs: ranges,
          fragments: fragments.values(),
          elements: index.entries(),
          current: {
            chains: [...this.fragments.values()].flatMap((f) => [...f.chains.keys()]),
            sets: new Map([...this.fragments.values()].flatMap((f) => [...f.sets])),
          },
        });
        await this.apply(full, script);
        for (const key of new Set([...this.ports.keys(), ...ports.keys()]))
          conntrack.push(...staleFlows(this.ports.get(key), ports.get(key), this.localNodes()));
        this.ports = ports;
        this.fragments = fragments;
        this.index = index;
        this.appliedRanges = ranges;
        services = fragments.size;
        if (!this.firstSync.settled) {
          this.firstSync.settled = true;
          this.firstSync.resolve();
        }
      } else {
        const keys = [...this.dirty];
        this.dirty.clear();
        const local = this.localNodes();
        const changes: FragmentChange[] = [];
        const elementChanges = [];
        const nextPorts = new Map<string, ServicePortInfo[] | undefined>();
        for (const key of keys) {
          const ports = this.portsOf(key);
          const next = ports ? serviceFragment(ports, local, this.settings) : undefined;
          const previous = this.fragments.get(key);
          nextPorts.set(key, ports);
          changes.push({ previous, next });
          elementChanges.push(...this.index.replace(key, previous?.elements ?? [], next?.elements ?? []));
          if (next) this.fragments.set(key, next);
          else this.fragments.delete(key);
        }
        let ranges: string[] | undefined;
        if (this.rangesDirty) {
          this.rangesDirty = false;
          ranges = this.serviceCIDRs();
          if (ranges.join() === this.appliedRanges.join()) ranges = undefined;
        }
        const script = incrementalScript(this.settings, changes, elementChanges, ranges);
        if (script) await this.apply('partial', script, true);
        if (ranges) this.appliedRanges = ranges;
        for (const [key, ports] of nextPorts) {
          conntrack.push(...staleFlows(this.ports.get(key), ports, local));
          if (ports) this.ports.set(key, ports);
          else this.ports.delete(key);
        }
        services = keys.length;
        kind = script ? 'partial' : 'none';
      }
      this.retryMs = RETRY_INITIAL_MS;
    } catch (err) {
      conntrack = [];
      this.logger.error({ err, kind }, 'service rules sync failed; a fresh full sync follows');
      if (!this.firstSync.settled) {
        this.firstSync.settled = true;
        this.firstSync.reject(err as Error);
      }
      this.fullNeeded = 'fresh';
      // Retry after a pause, which also holds back the syncs that changes would schedule meanwhile.
      this.notBefore = performance.now() + this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      this.again = true;
      return;
    }
    const nftDone = performance.now();
    for (const filter of conntrack) {
      const problem = await this.commands.conntrackDelete(filter);
      if (problem) this.logger.warn({ filter: filter.join(' '), problem }, 'clearing stale UDP conntrack entries failed');
    }
    if (kind !== 'none')
      this.logger.debug(
        {
          kind,
          services,
          syncMs: round(nftDone - started),
          nftMs: round(this.lastNftMs),
          sinceChangeMs: since === undefined ? undefined : round(nftDone - since),
          conntrackDeletes: conntrack.length,
        },
        'service rules synced',
      );
  }

  private async apply(kind: string, script: string, quick = false): Promise<void> {
    const started = performance.now();
    const problem = quick ? await this.commands.nftQuick(script) : await this.commands.nft(script);
    this.lastNftMs = performance.now() - started;
    if (problem) throw new ProxyError('SKIFF_ERR_PROXY_NFT_FAILED', { kind, table: this.settings.table, detail: firstLines(problem) });
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;

function firstLines(text: string): string {
  return text.split('\n').slice(0, 3).join(' | ');
}

/**
 * The conntrack filters for UDP flows whose endpoint is gone: without them a client that keeps sending from
 * one port (a resolver) keeps reaching the dead endpoint, since its flow never expires.
 */
export function staleFlows(
  before: readonly ServicePortInfo[] | undefined,
  after: readonly ServicePortInfo[] | undefined,
  local: ReadonlySet<string>,
): string[][] {
  const filters: string[][] = [];
  const reachable = (port: ServicePortInfo | undefined) =>
    new Set(port ? [...usableEndpoints(port.endpoints), ...usableEndpoints(port.endpoints, local)].map((e) => e.ip) : []);
  for (const port of before ?? []) {
    if (port.protocol !== 'udp') continue;
    const still = reachable(after?.find((p) => p.id === port.id));
    for (const ip of reachable(port)) {
      if (still.has(ip)) continue;
      for (const destination of [...(port.clusterIP ? [port.clusterIP] : []), ...port.externalIPs])
        filters.push(['-p', 'udp', '--orig-dst', destination, '--orig-port-dst', String(port.port), '--dst-nat', ip]);
      if (port.nodePort) filters.push(['-p', 'udp', '--orig-port-dst', String(port.nodePort), '--dst-nat', ip]);
    }
  }
  return filters;
}
