import { RESOURCES, type LoadBalancerIngress, type Node, type Service } from '@skiff/api';
import { objectKey, splitObjectKey, WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { isOurs, nodeIngress, sameIngress } from './ingress.js';
import { CONTROLLER_NAME } from './names.js';

/**
 * Gives `type: LoadBalancer` Services the nodes' addresses as `status.loadBalancer.ingress`, as k3s's
 * servicelb does for small clusters without a cloud load balancer, and clears it when a Service stops
 * being one (seen as a change from one of ours to a Service of another type: the load-balancer status of any
 * other Service is someone else's, as upstream's e2e writes one on a ClusterIP Service). Node changes re-check
 * every LoadBalancer Service.
 */
export class ServiceLBController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly services: Informer<Service>;
  private readonly nodes: Informer<Node>;
  /** Services that stopped being our LoadBalancers and still carry the ingress we gave them. */
  private readonly stopped = new Set<string>();

  constructor(private readonly ctx: ControllerContext) {
    this.services = ctx.informers.informer<Service>(RESOURCES.services);
    this.nodes = ctx.informers.informer<Node>(RESOURCES.nodes);
    this.services.addHandlers({
      add: (service) => this.enqueue(service),
      update: (old, service) => {
        if (isOurs(old) && !isOurs(service) && service.spec?.type !== 'LoadBalancer') this.stopped.add(objectKey(service));
        this.enqueue(service);
      },
      delete: (service) => this.stopped.delete(objectKey(service)),
    });
    const all = () => {
      for (const service of this.services.list()) if (isOurs(service)) this.enqueue(service);
    };
    this.nodes.addHandlers({ add: all, update: (old, node) => !sameIngress(nodeIngress([old]), nodeIngress([node])) && all(), delete: all });
  }

  /** Waits for the Service and Node caches, then works the queue until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.services, this.nodes], queue: this.queue, workers, sync: (key) => this.sync(key) });
  }

  async sync(key: string): Promise<void> {
    const cached = this.services.get(key);
    if (!cached) return;
    const current = cached.status?.loadBalancer?.ingress;
    let wanted: LoadBalancerIngress[];
    if (isOurs(cached)) wanted = nodeIngress(this.nodes.list());
    else if (this.stopped.has(key) && cached.spec?.type !== 'LoadBalancer' && current?.length) wanted = [];
    else return void this.stopped.delete(key);
    if (sameIngress(current, wanted)) return void this.stopped.delete(key);
    const { namespace, name } = splitObjectKey(key);
    const service = await this.ctx.client.get<Service>(RESOURCES.services, name, namespace);
    const loadBalancer = wanted.length ? { ingress: wanted } : {};
    await this.ctx.client.updateStatus<Service>(RESOURCES.services, { ...{}, ...service, status: { ...{}, ...service.status, loadBalancer } });
    if (!wanted.length) this.stopped.delete(key);
    if (wanted.length) this.ctx.recorder.event(service, 'Normal', 'EnsuredLoadBalancer', 'Ensured load balancer');
  }

  private enqueue(service: Service): void {
    const key = objectKey(service);
    if (isOurs(service) || this.stopped.has(key)) this.queue.add(key);
  }
}
