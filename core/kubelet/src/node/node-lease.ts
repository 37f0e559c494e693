import { RESOURCES, isApiError, type Lease, type Namespace, type Node } from '@skiff/api';
import type { ApiClient, Logger } from '@skiff/kernel';
import { NODE_LEASE_NAMESPACE } from '../names.js';

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * The node's heartbeat Lease (kube-node-lease/<node>), owned by the Node so it goes when the Node goes.
 * `renew` creates it on first use and updates renewTime afterwards.
 */
export class NodeLease {
  private lease: Lease | undefined;

  constructor(
    private readonly client: ApiClient,
    private readonly nodeName: string,
    private readonly durationSeconds: number,
    private readonly logger: Logger,
  ) {}

  async renew(node: Node): Promise<void> {
    const now = microTime(Date.now());
    if (!this.lease) {
      const { lease, created } = await this.getOrCreate(node, now);
      this.lease = lease;
      if (created) return;
    }
    const renewed = structuredClone(this.lease);
    renewed.spec = { ...{}, ...renewed.spec, holderIdentity: this.nodeName, leaseDurationSeconds: this.durationSeconds, renewTime: now };
    try {
      this.lease = await this.client.update<Lease>(RESOURCES.leases, renewed);
    } catch (err) {
      // Someone else wrote it (or deleted it): start over from the server's copy next time.
      this.lease = undefined;
      throw err;
    }
  }

  private async getOrCreate(node: Node, now: string): Promise<{ lease: Lease; created: boolean }> {
    try {
      return { lease: await this.client.get<Lease>(RESOURCES.leases, this.nodeName, NODE_LEASE_NAMESPACE), created: false };
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.nodeName,
        namespace: NODE_LEASE_NAMESPACE,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.metadata.name!, uid: node.metadata.uid! }],
      },
      spec: { holderIdentity: this.nodeName, leaseDurationSeconds: this.durationSeconds, renewTime: now },
    };
    try {
      return { lease: await this.client.create<Lease>(RESOURCES.leases, lease, NODE_LEASE_NAMESPACE), created: true };
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
      await this.ensureNamespace();
      return { lease: await this.client.create<Lease>(RESOURCES.leases, lease, NODE_LEASE_NAMESPACE), created: true };
    }
  }

  /** kube-node-lease is normally made by the control plane; a bare cluster may not have it yet. */
  private async ensureNamespace(): Promise<void> {
    const namespace: Namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NODE_LEASE_NAMESPACE } };
    try {
      await this.client.create(RESOURCES.namespaces, namespace);
      this.logger.info({ namespace: NODE_LEASE_NAMESPACE }, 'created the node lease namespace');
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
    }
  }
}
