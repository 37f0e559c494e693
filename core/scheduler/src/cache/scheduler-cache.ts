import type { Node, Pod } from '@skiff/api';
import type { NodeInfo } from '@skiff/kernel';
import { addPodToNodeInfo, createNodeInfo, removePodFromNodeInfo, setNodeInfoNode } from '../framework/node-info.js';

interface Placement {
  nodeName: string;
  pod: Pod;
  /** Placed by the scheduler itself, before the API server confirmed the binding. */
  assumed: boolean;
}

/**
 * What the scheduler believes each node holds: the Node, the pods bound to it and the pods it has just
 * assumed there (so the next cycle does not hand the same room out twice while a bind is in flight).
 */
export class SchedulerCache {
  private readonly nodes = new Map<string, NodeInfo>();
  /** Pods bound to a node the cache has no Node object for (yet, or any more). */
  private readonly waiting = new Map<string, Map<string, Pod>>();
  private readonly placements = new Map<string, Placement>();
  private list: NodeInfo[] | undefined;

  /** The nodes to schedule onto; the same array until a node is added or removed. */
  nodeInfos(): NodeInfo[] {
    return (this.list ??= [...this.nodes.values()]);
  }

  nodeInfo(name: string): NodeInfo | undefined {
    return this.nodes.get(name);
  }

  setNode(node: Node): void {
    const name = node.metadata.name!;
    const existing = this.nodes.get(name);
    if (existing) {
      setNodeInfoNode(existing, node);
      return;
    }
    const pods = [...(this.waiting.get(name)?.values() ?? [])];
    this.waiting.delete(name);
    this.nodes.set(name, createNodeInfo(node, pods));
    this.list = undefined;
  }

  removeNode(name: string): void {
    const info = this.nodes.get(name);
    if (!info) return;
    this.nodes.delete(name);
    this.list = undefined;
    const orphans = new Map<string, Pod>();
    for (const [key, placement] of this.placements) if (placement.nodeName === name) orphans.set(key, placement.pod);
    if (orphans.size > 0) this.waiting.set(name, orphans);
  }

  /** A pod the API server says is bound (spec.nodeName set); replaces an assumed copy. */
  setPod(key: string, pod: Pod): void {
    this.place(key, pod, pod.spec.nodeName!, false);
  }

  removePod(key: string): void {
    const placement = this.placements.get(key);
    if (!placement) return;
    this.placements.delete(key);
    const info = this.nodes.get(placement.nodeName);
    if (info) {
      removePodFromNodeInfo(info, placement.pod);
      return;
    }
    const waiting = this.waiting.get(placement.nodeName);
    waiting?.delete(key);
    if (waiting?.size === 0) this.waiting.delete(placement.nodeName);
  }

  /** Counts `pod` on `nodeName` before the binding is confirmed. */
  assume(key: string, pod: Pod, nodeName: string): void {
    const assumed: Pod = { ...pod, spec: { ...pod.spec, nodeName } };
    this.place(key, assumed, nodeName, true);
  }

  /** Drops an assumption whose binding failed; a confirmed pod stays. */
  forget(key: string): void {
    if (this.placements.get(key)?.assumed) this.removePod(key);
  }

  isAssumed(key: string): boolean {
    return this.placements.get(key)?.assumed ?? false;
  }

  private place(key: string, pod: Pod, nodeName: string, assumed: boolean): void {
    this.removePod(key);
    this.placements.set(key, { nodeName, pod, assumed });
    const info = this.nodes.get(nodeName);
    if (info) {
      addPodToNodeInfo(info, pod);
      return;
    }
    let waiting = this.waiting.get(nodeName);
    if (!waiting) this.waiting.set(nodeName, (waiting = new Map()));
    waiting.set(key, pod);
  }
}
