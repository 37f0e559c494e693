import type { Node } from '@skiff/api';
import type { Informer, Logger, NodePeer, PodNetwork } from '@skiff/kernel';

const SETTLE_MS = 50;

/** The cluster's nodes on other hosts that have a pod range and an InternalIP, by name. */
export function peersOf(nodes: Node[], self: { name: string; ip: string }): NodePeer[] {
  const peers: NodePeer[] = [];
  for (const node of nodes) {
    const podCIDR = node.spec?.podCIDR;
    const internalIP = node.status?.addresses?.find((address) => address.type === 'InternalIP')?.address;
    if (node.metadata.name === self.name || !podCIDR || !internalIP || internalIP === self.ip) continue;
    peers.push({ name: node.metadata.name!, podCIDR, internalIP });
  }
  return peers.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Tells a network that spans hosts about the other nodes whenever the set changes (a node joins, leaves, gets its
 * range or a new address); heartbeats, which change nothing it routes by, cost one comparison. Calls never overlap.
 */
export function followPeers(
  nodes: Informer<Node>,
  self: { name: string; ip: string },
  network: PodNetwork & Required<Pick<PodNetwork, 'peers'>>,
  logger: Logger,
): void {
  let applied = '';
  let scheduled: NodeJS.Timeout | undefined;
  let chain = Promise.resolve();
  const changed = () => {
    if (scheduled) return;
    scheduled = setTimeout(() => {
      scheduled = undefined;
      const peers = peersOf(nodes.list(), self);
      const key = JSON.stringify(peers);
      if (key === applied) return;
      applied = key;
      chain = chain
        .then(() => network.peers(peers))
        .then(
          () => logger.info({ peers: peers.map((peer) => `${peer.name} ${peer.podCIDR} via ${peer.internalIP}`) }, 'routes to other nodes updated'),
          (err: unknown) => {
            // Tried again with the next change of any node (heartbeats included) rather than left stale.
            applied = '';
            logger.warn({ err }, 'updating the routes to other nodes failed');
          },
        );
    }, SETTLE_MS);
    scheduled.unref();
  };
  nodes.addHandlers({ add: changed, update: changed, delete: changed });
}
