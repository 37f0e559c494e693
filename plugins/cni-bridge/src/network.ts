import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger, NetworkAttachment, NetworkResult, NodeContext, NodePeer, PodNetwork } from '@skiff/kernel';
import { ResultCache, type CachedAttachment } from './cache.js';
import { CniRunner, type ChainTarget } from './chain.js';
import { formatCidr, intToIp, isHostAddress, nodeSubnet, parseCidr, type Ipv4Cidr } from './cidr.js';
import { bridgeConflist, loopbackConflist, portMappingsOf, toNetworkResult } from './conflist.js';
import { CniError } from './errors.js';
import { ensureSysctl, preflight, toolPath, type HostTools } from './host.js';
import { sweepRules } from './iptables.js';
import { keepPodToPodAddresses, PeerRoutes } from './routes.js';
import { cniArgs } from './invoke.js';
import { MAX_INTERFACE_NAME, NETWORK_NAME, PLUGIN_TIMEOUT_MS, POD_INTERFACE } from './names.js';
import type { CniConfList, CniDns, CniResult } from './types.js';

const run = promisify(execFile);

/** The file systems a network namespace handle lives on: nsfs (a bind-mounted namespace) and procfs (/proc/<pid>/ns/net). */
const NSFS_MAGIC = 0x6e736673;
const PROC_SUPER_MAGIC = 0x9fa0;

/** Whether `path` still names a network namespace (as the CNI libraries check before they enter one). */
async function isNamespace(path: string): Promise<boolean> {
  if (!path) return false;
  try {
    const { type } = await statfs(path);
    return type === NSFS_MAGIC || type === PROC_SUPER_MAGIC;
  } catch {
    return false;
  }
}

export interface BridgeNetworkOptions {
  clusterCIDR: string;
  nodeCIDRMaskSize: number;
  binDir: string;
  bridgeName: string;
  hairpinMode: boolean;
  ipMasq: boolean;
  mtu?: number;
  dns?: { nameservers?: string[]; searches?: string[]; options?: string[] };
}

/** Seams for tests: who we run as. */
export interface HostOverrides {
  uid?: number;
}

function cniDns(dns: BridgeNetworkOptions['dns']): CniDns | undefined {
  const out: CniDns = {};
  if (dns?.nameservers?.length) out.nameservers = dns.nameservers;
  if (dns?.searches?.length) out.search = dns.searches;
  if (dns?.options?.length) out.options = dns.options;
  return Object.keys(out).length > 0 ? out : undefined;
}

interface Layout {
  bridge: string;
  subnet: Ipv4Cidr;
  main: CniConfList;
  loopback: CniConfList;
  /** host-local's dataDir: allocations are `<ipamDir>/<network>/<ip>`. */
  ipamDir: string;
  cache: ResultCache;
  tools: HostTools;
}

/**
 * A node's pod network on a Linux bridge, run by the standard CNI plugin binaries: `loopback` for lo, then
 * the list bridge (host-local IPAM) → portmap for the pod interface. ADD results are cached so DEL and CHECK
 * hand the plugins the same config and prevResult; operations on one container run one at a time.
 */
export class BridgeNetwork implements PodNetwork {
  readonly name = NETWORK_NAME;
  private readonly locks = new Map<string, Promise<unknown>>();

  private constructor(
    private readonly layout: Layout,
    private readonly runner: CniRunner,
    private readonly logger: Logger,
  ) {}

  /** Checks the host (root, plugins, tools), writes the configuration for inspection and turns IPv4 forwarding on. */
  static async create(node: NodeContext, options: BridgeNetworkOptions, overrides: HostOverrides = {}): Promise<BridgeNetwork> {
    // The block the cluster gave the node, else the node's own by its index in this process.
    const subnet = node.podCIDR ? parseCidr(node.podCIDR, 'podCIDR') : nodeSubnet(options.clusterCIDR, node.index, options.nodeCIDRMaskSize);
    const bridge = `${options.bridgeName}${node.index}`;
    if (bridge.length > MAX_INTERFACE_NAME) throw new CniError('SKIFF_ERR_CNI_BRIDGE_NAME_TOO_LONG', { name: bridge, length: bridge.length });
    const path = toolPath();
    const tools = await preflight(options.binDir, path, 'uid' in overrides ? overrides.uid : process.getuid?.());

    const dir = join(node.dataDir, 'cni');
    const ipamDir = join(dir, 'networks');
    const dns = cniDns(options.dns);
    const main = bridgeConflist({
      networkName: bridge,
      bridge,
      subnet: formatCidr(subnet),
      ipamDataDir: ipamDir,
      hairpinMode: options.hairpinMode,
      ipMasq: options.ipMasq,
      ...(options.mtu === undefined ? {} : { mtu: options.mtu }),
      ...(dns ? { dns } : {}),
    });
    const loopback = loopbackConflist();
    await mkdir(join(dir, 'net.d'), { recursive: true });
    await writeFile(join(dir, 'net.d', `10-${main.name}.conflist`), JSON.stringify(main, null, 2) + '\n');
    await writeFile(join(dir, 'net.d', `99-${loopback.name}.conflist`), JSON.stringify(loopback, null, 2) + '\n');
    const forwardingTurnedOn = await ensureSysctl('net.ipv4.ip_forward', '1');
    if (options.ipMasq) await keepPodToPodAddresses(tools.iptables, options.clusterCIDR);

    const logger = node.logger.child({ network: NETWORK_NAME, bridge });
    const runner = new CniRunner(options.binDir, { ...{}, ...process.env, PATH: path }, PLUGIN_TIMEOUT_MS, logger);
    const network = new BridgeNetwork({ bridge, subnet, main, loopback, ipamDir, cache: new ResultCache(join(dir, 'results')), tools }, runner, logger);
    const released = await network.releaseDeadAttachments();
    logger.info({ podCIDR: formatCidr(subnet), forwardingTurnedOn, released }, 'bridge network ready');
    return network;
  }

  podCIDR(): string {
    return formatCidr(this.layout.subnet);
  }

  /** Routes the other nodes' pod ranges to their InternalIPs (nodes sharing a network: host-gateway routing). */
  async peers(peers: NodePeer[]): Promise<void> {
    await this.routes.apply(peers);
  }

  private get routes(): PeerRoutes {
    return new PeerRoutes(this.layout.tools.ip, this.layout.tools.bridge, formatCidr(this.layout.subnet));
  }

  /** The bridge device and CNI network name of this node. */
  get bridge(): string {
    return this.layout.bridge;
  }

  /** ADD is idempotent: an attachment that still checks out is answered from the cache. */
  add(attachment: NetworkAttachment): Promise<NetworkResult> {
    return this.serially(attachment.containerId, async () => {
      if (!attachment.netnsPath) throw new CniError('SKIFF_ERR_CNI_NO_NETNS', { containerId: attachment.containerId, network: this.layout.main.name });
      const cached = await this.layout.cache.read(this.layout.main.name, attachment.containerId, attachment.ifName);
      if (cached) {
        if (cached.netns === attachment.netnsPath && (await this.stillAttached(attachment))) return toNetworkResult(cached.result);
        // The old attachment lives in the namespace it was made in.
        await this.detach({ ...{}, ...attachment, netnsPath: cached.netns });
      }
      return toNetworkResult(await this.attach(attachment));
    });
  }

  /** DEL never fails for what is already gone: a missing namespace or cache entry still runs every plugin with what is known. */
  del(attachment: NetworkAttachment): Promise<void> {
    return this.serially(attachment.containerId, () => this.detach(attachment));
  }

  check(attachment: NetworkAttachment): Promise<void> {
    return this.serially(attachment.containerId, () => this.verify(attachment));
  }

  /**
   * At node shutdown, with no pod attached any more, removes the bridge and what is left of this network's
   * iptables rules. Attachments whose namespace is gone are released first (their pods ended without a DEL: the
   * runtime could not stop them). Pods still attached (a kubelet stop leaves sandboxes running) keep both, so
   * that a restarted kubelet finds them working.
   */
  async close(): Promise<void> {
    await Promise.all(this.locks.values());
    await this.routes.clear().catch((err: unknown) => this.logger.warn({ err }, 'removing the routes to other nodes failed'));
    await this.releaseDeadAttachments();
    const attached = await this.layout.cache.list(this.layout.main.name);
    if (attached.length > 0) {
      this.logger.info({ attached: attached.length }, 'pods still attached: the bridge and its iptables rules stay');
      return;
    }
    await run(this.layout.tools.ip, ['link', 'del', this.layout.bridge]).catch((err: { stderr?: string }) => {
      if (!/Cannot find device/.test(err.stderr ?? '')) throw err;
    });
    const tables = await sweepRules({ save: this.layout.tools['iptables-save'], restore: this.layout.tools['iptables-restore'] }, this.layout.main.name);
    this.logger.info({ tablesCleaned: tables }, 'bridge removed');
  }

  /**
   * DEL for every cached attachment whose network namespace is gone — its pod ended without one (the container
   * runtime died first, or the machine restarted) — then removal of the rules tagged for containers with no live
   * attachment. Attachments in a namespace that still exists stay: their pods may still run. Answers how many
   * were released.
   */
  private async releaseDeadAttachments(): Promise<number> {
    const { main, loopback, cache, tools } = this.layout;
    const live = new Set<string>();
    const dead = new Map<string, CachedAttachment>();
    for (const entry of [...(await cache.list(main.name)), ...(await cache.list(loopback.name))]) {
      if (await isNamespace(entry.netns)) live.add(entry.containerId);
      else if (entry.networkName === main.name || !dead.has(entry.containerId)) dead.set(entry.containerId, entry);
    }
    let released = 0;
    for (const [containerId, entry] of dead) {
      if (live.has(containerId)) continue;
      const pod = new Map(entry.cniArgs);
      const attachment: NetworkAttachment = {
        containerId,
        netnsPath: '',
        ifName: entry.networkName === main.name ? entry.ifName : POD_INTERFACE,
        podName: pod.get('K8S_POD_NAME') ?? '',
        podNamespace: pod.get('K8S_POD_NAMESPACE') ?? '',
        podUid: pod.get('K8S_POD_UID') ?? '',
      };
      try {
        await this.serially(containerId, () => this.detach(attachment));
        released++;
      } catch (err) {
        this.logger.warn({ err, container: containerId }, 'releasing the attachment of a pod that is gone failed');
      }
    }
    if (released > 0) this.logger.info({ released }, 'released the network of pods whose namespace is gone');
    await sweepRules({ save: tools['iptables-save'], restore: tools['iptables-restore'] }, main.name, (containerId) => !live.has(containerId));
    return released;
  }

  private async attach(attachment: NetworkAttachment): Promise<CniResult> {
    const preferred = this.freePreferredIP(attachment.preferredIP);
    try {
      return await this.attachOnce(attachment, preferred ? [['IP', preferred]] : []);
    } catch (err) {
      await this.cleanUp(attachment);
      if (!preferred) throw err;
      this.logger.debug({ err, container: attachment.containerId, preferred }, 'preferred address not available; taking any');
    }
    try {
      return await this.attachOnce(attachment, []);
    } catch (err) {
      await this.cleanUp(attachment);
      throw err;
    }
  }

  private async attachOnce(attachment: NetworkAttachment, extraArgs: [string, string][]): Promise<CniResult> {
    const { main, loopback, cache } = this.layout;
    const args = cniArgs(attachment, extraArgs);
    const runtimeConfig = { portMappings: portMappingsOf(attachment) };
    const target = (ifName: string): ChainTarget => ({ containerId: attachment.containerId, netns: attachment.netnsPath, ifName, args, runtimeConfig });
    const entry = (config: CniConfList, ifName: string, result: CniResult): CachedAttachment => ({
      kind: 'cniCacheV1',
      networkName: config.name,
      containerId: attachment.containerId,
      ifName,
      netns: attachment.netnsPath,
      cniArgs: args,
      capabilityArgs: runtimeConfig,
      config,
      result,
    });
    await cache.write(entry(loopback, 'lo', await this.runner.add(loopback, target('lo'))));
    const result = await this.runner.add(main, target(attachment.ifName));
    await cache.write(entry(main, attachment.ifName, result));
    return result;
  }

  /** The pod's previous address, when it is ours to give and host-local has no allocation for it. */
  private freePreferredIP(ip: string | undefined): string | undefined {
    const { subnet, ipamDir, main } = this.layout;
    if (!ip || !isHostAddress(ip, subnet) || ip === intToIp(subnet.network + 1)) return undefined;
    return existsSync(join(ipamDir, main.name, ip)) ? undefined : ip;
  }

  private async stillAttached(attachment: NetworkAttachment): Promise<boolean> {
    try {
      await this.verify(attachment);
      return true;
    } catch (err) {
      this.logger.info({ err, container: attachment.containerId }, 'cached attachment fails CHECK: attaching again');
      return false;
    }
  }

  private async verify(attachment: NetworkAttachment): Promise<void> {
    const { main, loopback, cache } = this.layout;
    const cached = await cache.read(main.name, attachment.containerId, attachment.ifName);
    if (!cached) throw new CniError('SKIFF_ERR_CNI_NOT_ATTACHED', { containerId: attachment.containerId, network: main.name });
    const lo = await cache.read(loopback.name, attachment.containerId, 'lo');
    const target = (entry: CachedAttachment): ChainTarget => ({
      containerId: entry.containerId,
      netns: attachment.netnsPath || entry.netns,
      ifName: entry.ifName,
      args: entry.cniArgs,
      runtimeConfig: entry.capabilityArgs,
    });
    if (lo) await this.runner.check(lo.config, target(lo), lo.result);
    await this.runner.check(cached.config, target(cached), cached.result);
  }

  private async detach(attachment: NetworkAttachment): Promise<void> {
    const { main, loopback, cache, tools } = this.layout;
    let first: unknown;
    let networkName = main.name;
    for (const [list, ifName] of [
      [main, attachment.ifName],
      [loopback, 'lo'],
    ] as const) {
      const cached = await cache.read(list.name, attachment.containerId, ifName);
      const netnsPath = attachment.netnsPath || cached?.netns || '';
      const target: ChainTarget = {
        containerId: attachment.containerId,
        // The spec lets DEL run without a namespace; the plugins then release what lives outside it.
        netns: (await isNamespace(netnsPath)) ? netnsPath : '',
        ifName,
        args: cached?.cniArgs ?? cniArgs(attachment),
        runtimeConfig: cached?.capabilityArgs ?? { portMappings: portMappingsOf(attachment) },
      };
      if (list === main && cached) networkName = cached.config.name;
      try {
        await this.runner.del(cached?.config ?? list, target, cached?.result);
        await cache.remove(list.name, attachment.containerId, ifName);
      } catch (err) {
        first ??= err;
      }
    }
    // bridge skips its ipMasq teardown when the namespace is gone; what it left is removed by its comment.
    await sweepRules({ save: tools['iptables-save'], restore: tools['iptables-restore'] }, networkName, attachment.containerId).catch((err: unknown) => {
      first ??= err;
    });
    if (first !== undefined) throw first;
  }

  private async cleanUp(attachment: NetworkAttachment): Promise<void> {
    await this.detach(attachment).catch((err: unknown) => this.logger.warn({ err, container: attachment.containerId }, 'cleanup after a failed ADD failed'));
  }

  private serially<T>(key: string, operation: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    const result = previous.then(operation, operation);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return result;
  }
}
