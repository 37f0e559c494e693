import type { CycleState, NodeInfo, SchedulingCode, SchedulingStatus } from '@skiff/kernel';
import type { Pod } from '@skiff/api';
import type { SchedulingProfile } from './profile.js';
import { callPluginSync as call, failureMessage, PluginThrew, type ExtensionPoint } from './extension-points.js';
import { NO_NODES_MESSAGE, fitErrorMessage } from './fit-error.js';

export interface ScheduleSuccess {
  nodeName: string;
  /** The winning node's weighted score (0 when scoring was skipped because one node fit). */
  score: number;
  feasibleNodes: number;
}

export interface ScheduleFailure {
  nodeName?: undefined;
  code: SchedulingCode;
  /** The FailedScheduling message ("0/3 nodes are available: 3 Insufficient cpu."). */
  message: string;
  /** Why each node was rejected, by node name (empty when a preFilter rejected the pod outright). */
  failures: Map<string, SchedulingStatus>;
  totalNodes: number;
  /** For an Error: the plugin that failed, where, and what it threw (when it threw). */
  plugin?: string;
  extensionPoint?: ExtensionPoint;
  cause?: unknown;
}

export type ScheduleResult = ScheduleSuccess | ScheduleFailure;

function stamp(status: NonNullable<SchedulingStatus>, plugin: string): NonNullable<SchedulingStatus> {
  return status.plugin ? status : { ...status, plugin };
}

function errorResult(point: ExtensionPoint, status: NonNullable<SchedulingStatus>, plugin: string, totalNodes: number): ScheduleFailure {
  const reasons = status.reasons.join(', ') || 'no reason given';
  return { code: 'Error', message: failureMessage(point, plugin, reasons), failures: new Map(), totalNodes, plugin, extensionPoint: point };
}

function thrownResult(err: PluginThrew, totalNodes: number): ScheduleFailure {
  const { message, plugin, extensionPoint, cause } = err;
  return { code: 'Error', message, failures: new Map(), totalNodes, plugin, extensionPoint, cause };
}

/**
 * One pod's scheduling decision over a set of nodes — the synchronous heart of the scheduling cycle:
 * preFilter → filter (every node, in one tight loop) → preScore → score, normalizeScore × weight → the
 * best node, ties broken at random. No I/O and no hooks: plugins are plain objects, so this runs over
 * thousands of nodes per pod. Reserve, permit and bind are the caller's (they may wait). A plugin that
 * throws makes the result an Error naming it and the extension point.
 */
export function schedulePod(
  profile: SchedulingProfile,
  state: CycleState,
  pod: Pod,
  nodes: readonly NodeInfo[],
  random: () => number = Math.random,
): ScheduleResult {
  try {
    return runCycle(profile, state, pod, nodes, random);
  } catch (err) {
    if (err instanceof PluginThrew) return thrownResult(err, nodes.length);
    throw err;
  }
}

function runCycle(profile: SchedulingProfile, state: CycleState, pod: Pod, nodes: readonly NodeInfo[], random: () => number): ScheduleResult {
  const totalNodes = nodes.length;
  if (totalNodes === 0) return { code: 'UnschedulableAndUnresolvable', message: NO_NODES_MESSAGE, failures: new Map(), totalNodes };

  for (const plugin of profile.preFilter) {
    const status = call('PreFilter', plugin.name, () => plugin.preFilter!(state, pod));
    if (!status) continue;
    if (status.code === 'Error') return errorResult('PreFilter', status, plugin.name, totalNodes);
    const reasons = status.reasons.join(', ');
    return { code: status.code, message: `0/${totalNodes} nodes are available: ${reasons}.`, failures: new Map(), totalNodes };
  }

  const feasible = filterNodes(profile, state, pod, nodes);
  if (feasible instanceof Map) {
    for (const status of feasible.values()) {
      if (status?.code === 'Error') return errorResult('Filter', status, status.plugin ?? 'filter', totalNodes);
    }
    const resolvable = [...feasible.values()].some((status) => status?.code === 'Unschedulable');
    return {
      code: resolvable ? 'Unschedulable' : 'UnschedulableAndUnresolvable',
      message: fitErrorMessage(totalNodes, feasible),
      failures: feasible,
      totalNodes,
    };
  }
  if (feasible.length === 1) return { nodeName: feasible[0]!.node.metadata.name!, score: 0, feasibleNodes: 1 };

  for (const plugin of profile.preScore) {
    const status = call('PreScore', plugin.name, () => plugin.preScore!(state, pod, feasible));
    if (status) return errorResult('PreScore', stamp(status, plugin.name), plugin.name, totalNodes);
  }
  const totals = scoreNodes(profile, state, pod, feasible);
  const best = pickBest(totals, random);
  return { nodeName: feasible[best]!.node.metadata.name!, score: totals[best]!, feasibleNodes: feasible.length };
}

/**
 * The nodes every filter accepts, or — when none does — why each node was rejected. Rejections are only
 * gathered into a map (with the plugin's name stamped on) when no node fits, so a cluster with many
 * full nodes costs no allocation per rejected node.
 */
function filterNodes(profile: SchedulingProfile, state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): NodeInfo[] | Map<string, SchedulingStatus> {
  const filters = profile.filter;
  const feasible: NodeInfo[] = [];
  const rejections: NonNullable<SchedulingStatus>[] = [];
  const rejectedBy: number[] = [];
  // One try around the whole loop (not one per call): the indices say which filter threw.
  let f = 0;
  try {
    for (let n = 0; n < nodes.length; n++) {
      const info = nodes[n]!;
      let rejected = false;
      for (f = 0; f < filters.length; f++) {
        const status = filters[f]!.filter!(state, pod, info);
        if (status) {
          if (feasible.length === 0) {
            rejections[n] = status;
            rejectedBy[n] = f;
          }
          rejected = true;
          break;
        }
      }
      if (!rejected) feasible.push(info);
    }
  } catch (err) {
    throw new PluginThrew(filters[f]!.name, 'Filter', err);
  }
  if (feasible.length > 0) return feasible;
  const failures = new Map<string, SchedulingStatus>();
  for (let n = 0; n < nodes.length; n++) failures.set(nodes[n]!.node.metadata.name!, stamp(rejections[n]!, filters[rejectedBy[n]!]!.name));
  return failures;
}

function scoreNodes(profile: SchedulingProfile, state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Float64Array {
  const totals = new Float64Array(nodes.length);
  for (const { plugin, weight } of profile.score) {
    try {
      if (!plugin.normalizeScore) {
        for (let i = 0; i < nodes.length; i++) totals[i]! += plugin.score!(state, pod, nodes[i]!) * weight;
        continue;
      }
      const scores = new Map<string, number>();
      for (const info of nodes) scores.set(info.node.metadata.name!, plugin.score!(state, pod, info));
      call('NormalizeScore', plugin.name, () => plugin.normalizeScore!(state, pod, scores));
      for (let i = 0; i < nodes.length; i++) totals[i]! += (scores.get(nodes[i]!.node.metadata.name!) ?? 0) * weight;
    } catch (err) {
      throw err instanceof PluginThrew ? err : new PluginThrew(plugin.name, 'Score', err);
    }
  }
  return totals;
}

/** Index of the highest total; among equal totals each is equally likely (reservoir sampling). */
export function pickBest(totals: ArrayLike<number>, random: () => number): number {
  let best = 0;
  let ties = 1;
  for (let i = 1; i < totals.length; i++) {
    if (totals[i]! > totals[best]!) {
      best = i;
      ties = 1;
    } else if (totals[i] === totals[best]) {
      ties++;
      if (random() * ties < 1) best = i;
    }
  }
  return best;
}
