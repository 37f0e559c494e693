import type { Node, Pod } from '@skiff/api';
import type { ClonableStateData, NodeInfo, SchedulerSnapshot } from '@skiff/kernel';
import { countMatching, hasAllTopologyKeys, NodeInclusion, type SpreadConstraint } from './constraints.js';

/**
 * The two domains with the fewest matching pods for one topology key. Two are enough: preemption only
 * ever removes pods from (or adds them to) one node, so when the smallest domain grows, the second one
 * still bounds the new minimum from above, and a simulation always starts from a fresh copy.
 */
class CriticalPaths {
  constructor(
    public firstValue = '',
    public firstCount = Number.MAX_SAFE_INTEGER,
    public secondValue = '',
    public secondCount = Number.MAX_SAFE_INTEGER,
  ) {}

  get min(): number {
    return this.firstCount;
  }

  update(value: string, count: number): void {
    if (value === this.firstValue || value === this.secondValue) {
      if (value === this.firstValue) this.firstCount = count;
      else this.secondCount = count;
      if (this.firstCount > this.secondCount) this.swap();
    } else if (count < this.firstCount) {
      this.secondValue = this.firstValue;
      this.secondCount = this.firstCount;
      this.firstValue = value;
      this.firstCount = count;
    } else if (count < this.secondCount) {
      this.secondValue = value;
      this.secondCount = count;
    }
  }

  private swap(): void {
    [this.firstValue, this.secondValue] = [this.secondValue, this.firstValue];
    [this.firstCount, this.secondCount] = [this.secondCount, this.firstCount];
  }

  clone(): CriticalPaths {
    return new CriticalPaths(this.firstValue, this.firstCount, this.secondValue, this.secondCount);
  }
}

/**
 * What preFilter learns once per pod and filter reads for every node: for each DoNotSchedule
 * constraint's topology key, the matching pods per domain (value), the number of domains, and the
 * smallest domains. `addPod` / `removePod` change it in place, so preemption clones it.
 */
export class SpreadState implements ClonableStateData {
  constructor(
    readonly constraints: readonly SpreadConstraint[],
    /** topologyKey → domain value → matching pods. Only domains of eligible nodes are present. */
    readonly counts: Map<string, Map<string, number>> = new Map(),
    /** topologyKey → number of eligible domains (fixed for the cycle: preemption does not add nodes). */
    readonly domains: ReadonlyMap<string, number> = new Map(),
    readonly critical: Map<string, CriticalPaths> = new Map(),
  ) {}

  clone(): SpreadState {
    const counts = new Map<string, Map<string, number>>();
    for (const [key, byValue] of this.counts) counts.set(key, new Map(byValue));
    const critical = new Map<string, CriticalPaths>();
    for (const [key, paths] of this.critical) critical.set(key, paths.clone());
    return new SpreadState(this.constraints, counts, this.domains, critical);
  }

  /** The global minimum a node's domain is compared with; 0 while there are fewer eligible domains than minDomains. */
  minMatching(c: SpreadConstraint): number | undefined {
    const paths = this.critical.get(c.topologyKey);
    if (!paths) return undefined;
    if ((this.domains.get(c.topologyKey) ?? 0) < c.minDomains) return 0;
    return paths.min;
  }

  matching(topologyKey: string, value: string): number {
    return this.counts.get(topologyKey)?.get(value) ?? 0;
  }

  /** `pod` was added to (delta 1) or removed from (delta -1) `node`, as preemption simulates. */
  update(pod: Pod, preemptor: Pod, node: Node, delta: 1 | -1): void {
    if (pod.metadata.namespace !== preemptor.metadata.namespace) return;
    const labels = node.metadata.labels;
    if (!labels || !hasAllTopologyKeys(labels, this.constraints)) return;
    const included = new NodeInclusion(preemptor, this.constraints).forNode(node);
    for (const c of this.constraints) {
      if (!c.selector.matches(pod.metadata.labels) || !included(c)) continue;
      const value = labels[c.topologyKey]!;
      const byValue = this.counts.get(c.topologyKey)!;
      const count = (byValue.get(value) ?? 0) + delta;
      byValue.set(value, count);
      this.critical.get(c.topologyKey)!.update(value, count);
    }
  }
}

/** Counts, over every node of the snapshot, the pods each DoNotSchedule constraint selects, per domain. */
export function computeSpreadState(pod: Pod, constraints: readonly SpreadConstraint[], snapshot: SchedulerSnapshot): SpreadState {
  const counts = new Map<string, Map<string, number>>();
  for (const c of constraints) counts.set(c.topologyKey, new Map());
  if (constraints.length === 0) return new SpreadState(constraints, counts);
  const inclusion = new NodeInclusion(pod, constraints);
  const namespace = pod.metadata.namespace;
  for (const info of snapshot.nodes as readonly NodeInfo[]) {
    const labels = info.node.metadata.labels;
    if (!labels || !hasAllTopologyKeys(labels, constraints)) continue;
    const included = inclusion.forNode(info.node);
    for (const c of constraints) {
      if (!included(c)) continue;
      const byValue = counts.get(c.topologyKey)!;
      const value = labels[c.topologyKey]!;
      byValue.set(value, (byValue.get(value) ?? 0) + countMatching(info, c, namespace));
    }
  }
  const domains = new Map<string, number>();
  const critical = new Map<string, CriticalPaths>();
  for (const [key, byValue] of counts) {
    domains.set(key, byValue.size);
    const paths = new CriticalPaths();
    for (const [value, count] of byValue) paths.update(value, count);
    critical.set(key, paths);
  }
  return new SpreadState(constraints, counts, domains, critical);
}
