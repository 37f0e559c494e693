import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { NodePeer } from '@skiff/kernel';

const run = promisify(execFile);

/** The routing protocol number the routes to other nodes carry, so they are told apart from anyone else's. */
export const PEER_ROUTE_PROTO = '115';
/** The comment of the rule that keeps pod addresses on pod-to-pod traffic between nodes (no masquerade). */
export const POD_TO_POD_COMMENT = 'skiff: pod-to-pod traffic keeps its source address';

/**
 * Host-gateway routing between nodes that share a network: each other node's pod range is routed to its InternalIP
 * (`ip route replace <podCIDR> via <InternalIP> proto 115`), and routes of nodes that left are removed. A peer whose
 * address is not on a connected network cannot be reached this way: `ip` refuses the route and the error says so.
 */
export class PeerRoutes {
  constructor(private readonly ip: string) {}

  /** The routes this network made, by destination. */
  async current(): Promise<Map<string, string>> {
    const { stdout } = await run(this.ip, ['-j', 'route', 'show', 'proto', PEER_ROUTE_PROTO]);
    const routes = JSON.parse(stdout || '[]') as Array<{ dst?: string; gateway?: string }>;
    return new Map(routes.filter((route) => route.dst && route.gateway).map((route) => [route.dst!, route.gateway!]));
  }

  async apply(peers: NodePeer[]): Promise<void> {
    const wanted = new Map(peers.map((peer) => [peer.podCIDR, peer.internalIP]));
    const current = await this.current();
    for (const [podCIDR, via] of wanted) {
      if (current.get(podCIDR) === via) continue;
      await run(this.ip, ['route', 'replace', podCIDR, 'via', via, 'proto', PEER_ROUTE_PROTO]).catch((err: { stderr?: string }) => {
        throw new Error(`routing ${podCIDR} via ${via} failed: ${(err.stderr ?? String(err)).trim()}`);
      });
    }
    for (const podCIDR of current.keys()) {
      if (!wanted.has(podCIDR)) await run(this.ip, ['route', 'del', podCIDR, 'proto', PEER_ROUTE_PROTO]).catch(() => undefined);
    }
  }

  /** Removes every route to another node (the node is stopping). */
  clear(): Promise<void> {
    return this.apply([]);
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
