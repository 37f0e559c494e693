import {
  labelSelectorFromObject,
  podFitsNodeAffinity,
  toleratesTaint,
  type LabelSelector,
  type LabelSelectorMatcher,
  type Labels,
  type Node,
  type Pod,
  type TopologySpreadConstraint,
} from '@skiff/api';
import type { NodeInfo } from '@skiff/kernel';

export type WhenUnsatisfiable = 'DoNotSchedule' | 'ScheduleAnyway';

/** A pod's constraint, ready to evaluate: its selector compiled (with matchLabelKeys merged in) and its defaults filled. */
export interface SpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly selector: LabelSelectorMatcher;
  /** The effective selector as text: per-node counts are cached under it (see countMatching). */
  readonly selectorKey: string;
  /** 1 when unset: the global minimum is never taken as 0 for lack of domains. */
  readonly minDomains: number;
  /** nodeAffinityPolicy Honor (the default): only nodes matching the pod's nodeSelector / required affinity count. */
  readonly honorNodeAffinity: boolean;
  /** nodeTaintsPolicy Honor (Ignore is the default): only nodes whose NoSchedule / NoExecute taints the pod tolerates count. */
  readonly honorNodeTaints: boolean;
}

/**
 * The selector with the pod's values for `matchLabelKeys` added as `key In (value)`; keys the pod lacks are
 * left out. A missing selector selects nothing and stays so.
 */
function effectiveSelector(selector: LabelSelector | undefined, matchLabelKeys: readonly string[] | undefined, podLabels: Labels): LabelSelector | undefined {
  if (!selector || !matchLabelKeys?.length) return selector;
  const pinned = matchLabelKeys.filter((key) => Object.hasOwn(podLabels, key)).map((key) => ({ key, operator: 'In', values: [podLabels[key]!] }));
  if (pinned.length === 0) return selector;
  return { ...{}, ...selector, matchExpressions: [...(selector.matchExpressions ?? []), ...pinned] };
}

/** The constraints for one `whenUnsatisfiable`, compiled; a selector Kubernetes would refuse throws its 400 ApiError. */
export function compileConstraints(constraints: readonly TopologySpreadConstraint[], podLabels: Labels, action: WhenUnsatisfiable): SpreadConstraint[] {
  const compiled: SpreadConstraint[] = [];
  for (const c of constraints) {
    if (c.whenUnsatisfiable !== action) continue;
    const selector = effectiveSelector(c.labelSelector, c.matchLabelKeys, podLabels);
    compiled.push({
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      selector: labelSelectorFromObject(selector),
      selectorKey: JSON.stringify(selector ?? null),
      minDomains: c.minDomains ?? 1,
      honorNodeAffinity: (c.nodeAffinityPolicy ?? 'Honor') === 'Honor',
      honorNodeTaints: (c.nodeTaintsPolicy ?? 'Ignore') === 'Honor',
    });
  }
  return compiled;
}

/** Whether the node carries every constraint's topology key (nodes that do not are no domain of any). */
export function hasAllTopologyKeys(labels: Labels | undefined, constraints: readonly SpreadConstraint[]): boolean {
  if (!labels) return constraints.length === 0;
  for (const c of constraints) if (!Object.hasOwn(labels, c.topologyKey)) return false;
  return true;
}

/** Whether the pod tolerates every NoSchedule / NoExecute taint on the node. */
function toleratesHardTaints(pod: Pod, node: Node): boolean {
  const tolerations = pod.spec.tolerations ?? [];
  for (const taint of node.spec?.taints ?? []) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerations.some((toleration) => toleratesTaint(toleration, taint))) return false;
  }
  return true;
}

/**
 * Decides, for one pod, which nodes count for a constraint under its node inclusion policies. The node
 * affinity and taint checks are made at most once per node, and not at all when no constraint honours them.
 */
export class NodeInclusion {
  private readonly fitsAffinity: (node: Node) => boolean;
  private readonly checksTaints: boolean;

  constructor(
    private readonly pod: Pod,
    constraints: readonly SpreadConstraint[],
  ) {
    const { nodeSelector, affinity } = pod.spec;
    const hasRequiredAffinity = Object.keys(nodeSelector ?? {}).length > 0 || !!affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    this.fitsAffinity = hasRequiredAffinity && constraints.some((c) => c.honorNodeAffinity) ? (node) => podFitsNodeAffinity(pod.spec, node) : () => true;
    this.checksTaints = constraints.some((c) => c.honorNodeTaints);
  }

  /** Per-node answers for every constraint of the pod, in order. */
  forNode(node: Node): (c: SpreadConstraint) => boolean {
    const affinityOk = this.fitsAffinity(node);
    const taintsOk = !this.checksTaints || toleratesHardTaints(this.pod, node);
    return (c) => (!c.honorNodeAffinity || affinityOk) && (!c.honorNodeTaints || taintsOk);
  }
}

/** Per node, the last counts by namespace and selector, valid while the node's generation stays. */
const countCache = new WeakMap<NodeInfo, { generation: number; size: number; byNamespace: Map<string, Map<string, number>> }>();
/** A node's cache is dropped when it holds more selectors than this (many Deployments spread on it). */
const MAX_CACHED_SELECTORS = 64;

/**
 * Pods on the node in the namespace that the constraint's selector picks; terminating pods do not count, nor
 * does an empty selector. Consecutive pods of one Deployment ask the same question of every node, and only
 * the node that took the last pod has changed since: the answers are kept per node until its generation
 * (bumped by the scheduler's cache on every change) moves, so a cycle costs one lookup per unchanged node.
 */
export function countMatching(info: NodeInfo, constraint: Pick<SpreadConstraint, 'selector' | 'selectorKey'>, namespace: string | undefined): number {
  const { selector } = constraint;
  if (selector.empty) return 0;
  const generation = info.generation;
  if (generation === undefined) return countOnNode(info, selector, namespace);
  let cached = countCache.get(info);
  if (!cached || cached.generation !== generation || cached.size >= MAX_CACHED_SELECTORS) {
    cached = { generation, size: 0, byNamespace: new Map() };
    countCache.set(info, cached);
  }
  // Two lookups with strings that already exist (their hashes are kept), rather than one with a new key.
  const space = namespace ?? '';
  let counts = cached.byNamespace.get(space);
  if (!counts) cached.byNamespace.set(space, (counts = new Map()));
  let count = counts.get(constraint.selectorKey);
  if (count === undefined) {
    count = countOnNode(info, selector, namespace);
    counts.set(constraint.selectorKey, count);
    cached.size++;
  }
  return count;
}

function countOnNode(info: NodeInfo, selector: LabelSelectorMatcher, namespace: string | undefined): number {
  let count = 0;
  for (const pod of info.pods) {
    if (pod.metadata.deletionTimestamp || pod.metadata.namespace !== namespace) continue;
    if (selector.matches(pod.metadata.labels)) count++;
  }
  return count;
}
