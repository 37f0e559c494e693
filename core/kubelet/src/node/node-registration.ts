import { RESOURCES, isApiError, type Node } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { rfc3339 } from '../pods/pod-status.js';
import { desiredNode, nodeLabels, nodeStatus, type NodeDescription } from './node-object.js';

/**
 * Registers the node (create, or bring an existing Node's labels, pod CIDR and status up to date) and
 * refreshes its status heartbeat. Status goes through the status subresource as a merge patch, so it
 * never conflicts with other writers of the Node.
 */
export class NodeRegistration {
  private current: Node | undefined;

  constructor(
    private readonly client: ApiClient,
    private readonly description: NodeDescription,
  ) {}

  /** The Node as last written or read. */
  get node(): Node {
    return this.current ?? desiredNode(this.description, rfc3339(Date.now()));
  }

  async register(): Promise<Node> {
    const desired = desiredNode(this.description, rfc3339(Date.now()));
    let node: Node;
    try {
      node = await this.client.create<Node>(RESOURCES.nodes, desired);
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
      node = await this.updateExisting();
    }
    this.current = node;
    return this.heartbeat();
  }

  /** The port of the kubelet's HTTPS API once it listens: posted at once. */
  async servingOn(port: number): Promise<Node> {
    this.description.kubeletPort = port;
    return this.heartbeat();
  }

  /** Posts fresh conditions (new heartbeat times) and the rest of the status. */
  async heartbeat(): Promise<Node> {
    const status = nodeStatus(this.description, rfc3339(Date.now()), this.current?.status?.conditions);
    this.current = await this.client.patch<Node>(RESOURCES.nodes, this.description.name, { status }, { patchType: 'merge', subresource: 'status' });
    return this.current;
  }

  private async updateExisting(): Promise<Node> {
    const existing = await this.client.get<Node>(RESOURCES.nodes, this.description.name);
    const updated = structuredClone(existing);
    updated.metadata.labels = { ...{}, ...existing.metadata.labels, ...nodeLabels(this.description.name) };
    const podCIDR = this.description.podCIDR;
    // A pod CIDR, once set, stays (Kubernetes refuses to change it).
    if (podCIDR && !existing.spec?.podCIDR) updated.spec = { ...{}, ...existing.spec, podCIDR, podCIDRs: [podCIDR] };
    return this.client.update<Node>(RESOURCES.nodes, updated);
  }
}
