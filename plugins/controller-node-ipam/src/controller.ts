import { isApiError, RESOURCES, type Node } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { CONTROLLER_NAME, EVENT_REASONS } from './names.js';
import type { NodeRanges } from './range.js';

/**
 * kube-controller-manager's node IPAM controller with its range allocator: every Node without `spec.podCIDR` gets
 * the lowest free block of the cluster range (`spec.podCIDR` and `spec.podCIDRs`), and a deleted node's block is
 * free again. Ranges nodes already hold — set by this controller earlier, or by a kubelet whose network chose its
 * own — are taken before any is handed out, so no two nodes share one.
 */
export class NodeIpamController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly nodes: Informer<Node>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly ranges: NodeRanges,
  ) {
    this.nodes = ctx.informers.informer<Node>(RESOURCES.nodes);
    this.nodes.addHandlers({
      add: (node) => this.seen(node),
      update: (old, node) => {
        if (old.spec?.podCIDR && old.spec.podCIDR !== node.spec?.podCIDR) this.ranges.release(old.spec.podCIDR);
        this.seen(node);
      },
      delete: (node) => {
        if (node.spec?.podCIDR) this.ranges.release(node.spec.podCIDR);
      },
    });
  }

  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, {
      informers: [this.nodes],
      queue: this.queue,
      workers,
      // Every range already held is taken before the first is handed out.
      beforeWorkers: () => this.nodes.list().forEach((node) => node.spec?.podCIDR && this.ranges.occupy(node.spec.podCIDR)),
      sync: (name) => this.sync(name),
    });
  }

  private seen(node: Node): void {
    if (node.spec?.podCIDR) this.ranges.occupy(node.spec.podCIDR);
    else this.queue.add(node.metadata.name!);
  }

  /** Gives one node a range if it has none. */
  async sync(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node || node.spec?.podCIDR || node.metadata.deletionTimestamp) return;
    const podCIDR = this.ranges.allocate();
    if (!podCIDR) {
      this.ctx.recorder.event(node, 'Warning', EVENT_REASONS.CIDR_NOT_AVAILABLE, `Node ${name} status is now: ${EVENT_REASONS.CIDR_NOT_AVAILABLE}`);
      throw new Error(`no pod range left for node ${name}: all ${this.ranges.blocks - 1} blocks are taken`);
    }
    try {
      await this.ctx.client.patch<Node>(RESOURCES.nodes, name, { spec: { podCIDR, podCIDRs: [podCIDR] } }, { patchType: 'merge' });
      this.ctx.logger.info({ node: name, podCIDR }, 'pod range assigned');
    } catch (err) {
      this.ranges.release(podCIDR);
      if (isApiError(err, 'NotFound')) return;
      this.ctx.recorder.event(node, 'Warning', EVENT_REASONS.CIDR_ASSIGNMENT_FAILED, `Node ${name} status is now: ${EVENT_REASONS.CIDR_ASSIGNMENT_FAILED}`);
      throw err;
    }
  }
}
