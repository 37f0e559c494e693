import type { Pod } from '@skiff/api';

/**
 * Pods that preemption nominated to a node (status.nominatedNodeName) and that are not bound yet: while
 * their victims terminate, the room is theirs, so other pods of lower priority are filtered as if they
 * already ran there.
 */
export class Nominator {
  private readonly byNode = new Map<string, Map<string, Pod>>();
  private readonly nodeOf = new Map<string, string>();

  /** Records (or moves, or with no node clears) a pod's nomination. */
  set(key: string, pod: Pod, nodeName: string | undefined): void {
    this.delete(key);
    if (!nodeName) return;
    let pods = this.byNode.get(nodeName);
    if (!pods) this.byNode.set(nodeName, (pods = new Map()));
    pods.set(key, pod);
    this.nodeOf.set(key, nodeName);
  }

  delete(key: string): void {
    const nodeName = this.nodeOf.get(key);
    if (nodeName === undefined) return;
    this.nodeOf.delete(key);
    const pods = this.byNode.get(nodeName);
    pods?.delete(key);
    if (pods?.size === 0) this.byNode.delete(nodeName);
  }

  nodeFor(key: string): string | undefined {
    return this.nodeOf.get(key);
  }

  pods(nodeName: string): Pod[] {
    const pods = this.byNode.get(nodeName);
    return pods ? [...pods.values()] : [];
  }

  get empty(): boolean {
    return this.byNode.size === 0;
  }
}
