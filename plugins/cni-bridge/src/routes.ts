import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { NodePeer } from '@skiff/kernel';
import { intToIp, parseIpv4Cidr } from '@skiff/api';

const run = promisify(execFile);

/** The routing protocol number the routes to other nodes carry, so they are told apart from anyone else's. */
export const PEER_ROUTE_PROTO = '115';
/** The comment of the rule that keeps pod addresses on pod-to-pod traffic between nodes (no masquerade). */
export const POD_TO_POD_COMMENT = 'skiff: pod-to-pod traffic keeps its source address';
/** The overlay to nodes that share no network with this one: one VXLAN device, the port Linux and flannel use. */
export const VXLAN = Object.freeze({ device: 'skiff-vxlan', vni: '1', port: '8472', mtu: '1450' });

/**
 * A node's tunnel endpoint on the overlay: the network address of its pod range (10.244.3.0 for 10.244.3.0/24),
 * and a MAC derived from it (0a:58 and the address's four bytes), so no node needs to publish either.
 */
export function tunnelEndpoint(podCIDR: string): { ip: string; mac: string } | undefined {
  const parsed = parseIpv4Cidr(podCIDR);
  if ('problem' in parsed) return undefined;
  const ip = intToIp(parsed.cidr.network);
  const bytes = ip.split('.').map((part) => Number(part).toString(16).padStart(2, '0'));
  return { ip, mac: ['0a', '58', ...bytes].join(':') };
}

async function ipJson<T>(ip: string, args: string[]): Promise<T> {
  const { stdout } = await run(ip, ['-j', ...args]);
  return JSON.parse(stdout || '[]') as T;
}

/**
 * Routes between nodes, two ways. A peer whose InternalIP is on a network this host is attached to (no gateway on
 * the way) gets host-gateway routing: its pod range via its InternalIP (`proto 115`). Any other peer is reached
 * through a VXLAN overlay: the range via the peer's tunnel endpoint on `skiff-vxlan`, with a permanent neighbour
 * and forwarding entry that send the encapsulated packets to its InternalIP (UDP 8472), which the hosts' own routes
 * carry. Routes, neighbours and forwarding entries of nodes that left are removed.
 */
export class PeerRoutes {
  constructor(
    private readonly ip: string,
    private readonly bridgeTool: string,
    /** This node's pod range, whose tunnel endpoint the overlay device holds. */
    private readonly podCIDR: string,
  ) {}

  /** The routes this network made, by destination: the gateway, and whether through the overlay. */
  async current(): Promise<Map<string, { via: string; overlay: boolean }>> {
    const routes = await ipJson<Array<{ dst?: string; gateway?: string; dev?: string }>>(this.ip, ['route', 'show', 'proto', PEER_ROUTE_PROTO]);
    return new Map(
      routes.filter((route) => route.dst && route.gateway).map((route) => [route.dst!, { via: route.gateway!, overlay: route.dev === VXLAN.device }]),
    );
  }

  async apply(peers: NodePeer[]): Promise<void> {
    const current = await this.current();
    const wanted = new Map<string, { via: string; overlay: boolean; peer: NodePeer }>();
    for (const peer of peers) {
      const overlay = !(await this.onLink(peer.internalIP));
      const via = overlay ? tunnelEndpoint(peer.podCIDR)?.ip : peer.internalIP;
      if (via) wanted.set(peer.podCIDR, { via, overlay, peer });
    }
    const overlayPeers = [...wanted.values()].filter((entry) => entry.overlay).map((entry) => entry.peer);
    if (overlayPeers.length > 0) await this.ensureOverlay();
    await this.overlayEntries(overlayPeers);
    for (const [podCIDR, { via, overlay }] of wanted) {
      const now = current.get(podCIDR);
      if (now?.via === via && now.overlay === overlay) continue;
      const args = overlay ? [podCIDR, 'via', via, 'dev', VXLAN.device, 'onlink'] : [podCIDR, 'via', via];
      await run(this.ip, ['route', 'replace', ...args, 'proto', PEER_ROUTE_PROTO]).catch((err: { stderr?: string }) => {
        throw new Error(`routing ${podCIDR} via ${via} failed: ${(err.stderr ?? String(err)).trim()}`);
      });
    }
    for (const podCIDR of current.keys()) {
      if (!wanted.has(podCIDR)) await run(this.ip, ['route', 'del', podCIDR, 'proto', PEER_ROUTE_PROTO]).catch(() => undefined);
    }
    if (overlayPeers.length === 0) await this.removeOverlay();
  }

  /** Removes every route to another node and the overlay device (the node is stopping). */
  clear(): Promise<void> {
    return this.apply([]);
  }

  /** Whether `address` is reached without a gateway (on a network this host is attached to). */
  private async onLink(address: string): Promise<boolean> {
    const [route] = await ipJson<Array<{ gateway?: string }>>(this.ip, ['route', 'get', address]);
    return route !== undefined && route.gateway === undefined;
  }

  private async ensureOverlay(): Promise<void> {
    const own = tunnelEndpoint(this.podCIDR);
    if (!own) throw new Error(`no tunnel endpoint for the pod range ${this.podCIDR}`);
    const exists = await run(this.ip, ['link', 'show', VXLAN.device]).then(
      () => true,
      () => false,
    );
    if (!exists) {
      await run(this.ip, ['link', 'add', VXLAN.device, 'address', own.mac, 'type', 'vxlan', 'id', VXLAN.vni, 'dstport', VXLAN.port, 'nolearning']);
      await run(this.ip, ['link', 'set', VXLAN.device, 'mtu', VXLAN.mtu]);
      await run(this.ip, ['addr', 'add', `${own.ip}/32`, 'dev', VXLAN.device]);
      await run(this.ip, ['link', 'set', VXLAN.device, 'up']);
    }
  }

  private async removeOverlay(): Promise<void> {
    await run(this.ip, ['link', 'del', VXLAN.device]).catch(() => undefined);
  }

  /** One permanent neighbour (endpoint → MAC) and forwarding entry (MAC → InternalIP) per overlay peer. */
  private async overlayEntries(peers: NodePeer[]): Promise<void> {
    const exists = await run(this.ip, ['link', 'show', VXLAN.device]).then(
      () => true,
      () => false,
    );
    if (!exists) return;
    const wanted = new Map<string, { ip: string; dst: string }>();
    for (const peer of peers) {
      const endpoint = tunnelEndpoint(peer.podCIDR);
      if (endpoint) wanted.set(endpoint.mac, { ip: endpoint.ip, dst: peer.internalIP });
    }
    const fdb = await ipJson<Array<{ mac?: string; dst?: string }>>(this.bridgeTool, ['fdb', 'show', 'dev', VXLAN.device]);
    const neighbours = await ipJson<Array<{ dst?: string; lladdr?: string }>>(this.ip, ['neigh', 'show', 'dev', VXLAN.device]);
    for (const entry of fdb) {
      if (entry.mac && entry.dst && wanted.get(entry.mac)?.dst !== entry.dst)
        await run(this.bridgeTool, ['fdb', 'del', entry.mac, 'dev', VXLAN.device, 'dst', entry.dst]).catch(() => undefined);
    }
    for (const entry of neighbours) {
      if (entry.dst && ![...wanted.values()].some((peer) => peer.ip === entry.dst))
        await run(this.ip, ['neigh', 'del', entry.dst, 'dev', VXLAN.device]).catch(() => undefined);
    }
    for (const [mac, { ip, dst }] of wanted) {
      await run(this.ip, ['neigh', 'replace', ip, 'lladdr', mac, 'dev', VXLAN.device, 'nud', 'permanent']);
      await run(this.bridgeTool, ['fdb', 'replace', mac, 'dev', VXLAN.device, 'dst', dst, 'self', 'permanent']);
    }
  }
}

/**
 * The CNI bridge masquerades whatever leaves a pod's subnet; traffic to another node's pods must keep the pod's
 * address, so it returns from POSTROUTING before the bridge's rules (inserted first, once per host).
 */
export async function keepPodToPodAddresses(iptables: string, clusterCIDR: string): Promise<void> {
  const rule = ['POSTROUTING', '-s', clusterCIDR, '-d', clusterCIDR, '-m', 'comment', '--comment', POD_TO_POD_COMMENT, '-j', 'RETURN'];
  const present = await run(iptables, ['-w', '-t', 'nat', '-C', ...rule]).then(
    () => true,
    () => false,
  );
  if (!present) await run(iptables, ['-w', '-t', 'nat', '-I', ...rule.slice(0, 1), '1', ...rule.slice(1)]);
}
