import { toleratesTaint, type Node, type NodeCondition, type Taint, type Toleration } from '@skiff/api';
import { CONDITION, TAINT_KEY } from './names.js';

export const NOT_READY_NO_EXECUTE: Readonly<Taint> = Object.freeze({ key: TAINT_KEY.NOT_READY, effect: 'NoExecute' });
export const UNREACHABLE_NO_EXECUTE: Readonly<Taint> = Object.freeze({ key: TAINT_KEY.UNREACHABLE, effect: 'NoExecute' });

/** Which NoSchedule taint each condition status stands for (upstream's TaintNodesByCondition table). */
const CONDITION_TAINTS: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.freeze({
  [CONDITION.READY]: { False: TAINT_KEY.NOT_READY, Unknown: TAINT_KEY.UNREACHABLE },
  [CONDITION.MEMORY_PRESSURE]: { True: TAINT_KEY.MEMORY_PRESSURE },
  [CONDITION.DISK_PRESSURE]: { True: TAINT_KEY.DISK_PRESSURE },
  [CONDITION.NETWORK_UNAVAILABLE]: { True: TAINT_KEY.NETWORK_UNAVAILABLE },
  [CONDITION.PID_PRESSURE]: { True: TAINT_KEY.PID_PRESSURE },
});

const CONDITION_TAINT_KEYS = new Set<string>([
  TAINT_KEY.NOT_READY,
  TAINT_KEY.UNREACHABLE,
  TAINT_KEY.MEMORY_PRESSURE,
  TAINT_KEY.DISK_PRESSURE,
  TAINT_KEY.NETWORK_UNAVAILABLE,
  TAINT_KEY.PID_PRESSURE,
  TAINT_KEY.UNSCHEDULABLE,
]);

/** Two taints are the same taint when key and effect agree (the value may differ). */
export function sameTaint(a: Pick<Taint, 'key' | 'effect'>, b: Pick<Taint, 'key' | 'effect'>): boolean {
  return a.key === b.key && a.effect === b.effect;
}

export function hasTaint(node: Node, taint: Pick<Taint, 'key' | 'effect'>): boolean {
  return (node.spec?.taints ?? []).some((t) => sameTaint(t, taint));
}

export function condition(node: Node, type: string): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === type);
}

/** The NoSchedule taints the node's conditions and `spec.unschedulable` call for. */
export function conditionTaints(node: Node): Taint[] {
  const taints: Taint[] = [];
  for (const c of node.status?.conditions ?? []) {
    const key = CONDITION_TAINTS[c.type]?.[c.status];
    if (key) taints.push({ key, effect: 'NoSchedule' });
  }
  if (node.spec?.unschedulable) taints.push({ key: TAINT_KEY.UNSCHEDULABLE, effect: 'NoSchedule' });
  return taints;
}

/** What must change for the node's condition NoSchedule taints to match its conditions; other taints are not touched. */
export function conditionTaintChanges(node: Node): { add: Taint[]; remove: Taint[] } {
  const wanted = conditionTaints(node);
  const present = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' && CONDITION_TAINT_KEYS.has(t.key));
  return {
    add: wanted.filter((w) => !present.some((p) => sameTaint(p, w))),
    remove: present.filter((p) => !wanted.some((w) => sameTaint(p, w))),
  };
}

/**
 * The node's taints with `remove` taken out and `add` put in (each replacing a taint with its key and
 * effect). Added NoExecute taints are stamped with `timeAdded`. Undefined when nothing would change.
 */
export function swapTaints(taints: readonly Taint[], add: readonly Taint[], remove: readonly Taint[], timeAdded: string): Taint[] | undefined {
  let changed = false;
  let result = taints.filter((t) => {
    const drop = remove.some((r) => sameTaint(r, t));
    changed ||= drop;
    return !drop;
  });
  for (const taint of add) {
    if (result.some((t) => sameTaint(t, taint))) continue;
    result = [...result, taint.effect === 'NoExecute' ? { ...{}, ...taint, timeAdded } : { ...taint }];
    changed = true;
  }
  return changed ? result : undefined;
}

export function noExecuteTaints(node: Node | undefined): Taint[] {
  return (node?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
}

/**
 * How long a pod with these tolerations may stay on a node with these NoExecute taints: 0 to evict it now
 * (a taint it does not tolerate, or a toleration of 0 seconds or less), the smallest `tolerationSeconds` of
 * the tolerations in use — the first one tolerating each taint — in milliseconds, or `Infinity` when they tolerate the taints forever.
 */
export function evictionDelayMs(taints: readonly Taint[], tolerations: readonly Toleration[]): number {
  if (taints.length === 0) return Infinity;
  const used: Toleration[] = [];
  for (const taint of taints) {
    const first = tolerations.find((t) => toleratesTaint(t, taint));
    if (!first) return 0;
    used.push(first);
  }
  let smallest = Infinity;
  for (const { tolerationSeconds } of used) {
    if (tolerationSeconds === undefined || tolerationSeconds === null) continue;
    if (tolerationSeconds <= 0) return 0;
    smallest = Math.min(smallest, tolerationSeconds);
  }
  return smallest === Infinity ? Infinity : smallest * 1000;
}
