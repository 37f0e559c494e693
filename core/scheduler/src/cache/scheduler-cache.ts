import type { Node, Pod } from '@skiff/api';
import type { NodeInfo, SchedulerSnapshot } from '@skiff/kernel';
import { addPodToNodeInfo, createNodeInfo, removePodFromNodeInfo, setNodeInfoNode } from '../framework/node-info.js';
import { nodeImageNames, normalizedImageName } from './snapshot.js';

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
  /** Nodes holding pods with affinity terms / required anti-affinity, kept as pods come and go. */
  private readonly withAffinity = new Set<NodeInfo>();
  private readonly withAntiAffinity = new Set<NodeInfo>();
  private affinityList: NodeInfo[] | undefined;
  private antiAffinityList: NodeInfo[] | undefined;
  /** Images by normalized name → on how many nodes; and each node's image names, to diff an update. */
  private readonly imageCounts = new Map<string, number>();
  private readonly nodeImages = new Map<string, Set<string>>();

  /** The nodes to schedule onto; the same array until a node is added or removed. */
  nodeInfos(): NodeInfo[] {
    return (this.list ??= [...this.nodes.values()]);
  }

  /**
   * The cache seen as a scheduling snapshot. Cycles are synchronous, so the live cache is the snapshot
   * (nothing changes under a cycle); the derived lists are kept incrementally, not rebuilt per pod.
   */
  snapshot(): SchedulerSnapshot {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const cache = this;
    return {
      get nodes() {
        return cache.nodeInfos();
      },
      get: (name) => this.nodes.get(name),
      get nodesWithAffinityPods() {
        return (cache.affinityList ??= [...cache.withAffinity]);
      },
      get nodesWithRequiredAntiAffinityPods() {
        return (cache.antiAffinityList ??= [...cache.withAntiAffinity]);
      },
      imageNodeCount: (image) => this.imageCounts.get(normalizedImageName(image)) ?? 0,
    };
  }

  private trackAffinity(info: NodeInfo): void {
    const has = (info.podsWithAffinity?.length ?? 0) > 0;
    if (has !== this.withAffinity.has(info)) {
      if (has) this.withAffinity.add(info);
      else this.withAffinity.delete(info);
      this.affinityList = undefined;
    }
    const hasAnti = (info.podsWithRequiredAntiAffinity?.length ?? 0) > 0;
    if (hasAnti !== this.withAntiAffinity.has(info)) {
      if (hasAnti) this.withAntiAffinity.add(info);
      else this.withAntiAffinity.delete(info);
      this.antiAffinityList = undefined;
    }
  }

  private trackImages(name: string, info: NodeInfo | undefined): void {
    const before = this.nodeImages.get(name);
    const after = info ? nodeImageNames(info) : undefined;
    for (const image of before ?? []) if (!after?.has(image)) this.countImage(image, -1);
    for (const image of after ?? []) if (!before?.has(image)) this.countImage(image, 1);
    if (after && after.size > 0) this.nodeImages.set(name, after);
    else this.nodeImages.delete(name);
  }

  private countImage(image: string, delta: number): void {
    const count = (this.imageCounts.get(image) ?? 0) + delta;
    if (count > 0) this.imageCounts.set(image, count);
    else this.imageCounts.delete(image);
  }

  nodeInfo(name: string): NodeInfo | undefined {
    return this.nodes.get(name);
  }

  setNode(node: Node): void {
    const name = node.metadata.name!;
    const existing = this.nodes.get(name);
    if (existing) {
      const imagesChanged = existing.node.status?.images !== node.status?.images;
      setNodeInfoNode(existing, node);
      if (imagesChanged) this.trackImages(name, existing);
      return;
    }
    const pods = [...(this.waiting.get(name)?.values() ?? [])];
    this.waiting.delete(name);
    const info = createNodeInfo(node, pods);
    this.nodes.set(name, info);
    this.list = undefined;
    this.trackAffinity(info);
    this.trackImages(name, info);
  }

  removeNode(name: string): void {
    const info = this.nodes.get(name);
    if (!info) return;
    this.nodes.delete(name);
    this.list = undefined;
    if (this.withAffinity.delete(info)) this.affinityList = undefined;
    if (this.withAntiAffinity.delete(info)) this.antiAffinityList = undefined;
    this.trackImages(name, undefined);
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
      this.trackAffinity(info);
      return;
    }
    const waiting = this.waiting.get(placement.nodeName);
    waiting?.delete(key);
    if (waiting?.size === 0) this.waiting.delete(placement.nodeName);
  }

  /** Counts `pod` on `nodeName` before the binding is confirmed. */
  assume(key: string, pod: Pod, nodeName: string): void {
    const assumed: Pod = { ...{}, ...pod, spec: { ...{}, ...pod.spec, nodeName } };
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
      this.trackAffinity(info);
      return;
    }
    let waiting = this.waiting.get(nodeName);
    if (!waiting) this.waiting.set(nodeName, (waiting = new Map()));
    waiting.set(key, pod);
  }
}
