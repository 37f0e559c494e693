import type { CycleState, NodeInfo, PreFilterResult, SchedulerPlugin, SchedulerSnapshot, SchedulingCode, SchedulingStatus } from '@skiff/kernel';
import { NodeListSnapshot } from '../cache/snapshot.js';
import type { Pod } from '@skiff/api';
import type { SchedulingProfile, ScorePluginEntry } from './profile.js';
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
  /** The plugins that rejected the pod: only cluster events they registered retry it. */
  unschedulablePlugins?: Set<string>;
  /** For an Error: the plugin that failed, where, and what it threw (when it threw). */
  plugin?: string;
  extensionPoint?: ExtensionPoint;
  cause?: unknown;
}

export type ScheduleResult = ScheduleSuccess | ScheduleFailure;

function stamp(status: NonNullable<SchedulingStatus>, plugin: string): NonNullable<SchedulingStatus> {
  return status.plugin ? status : { ...{}, ...status, plugin };
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
  nodes: readonly NodeInfo[] | SchedulerSnapshot,
  random: () => number = Math.random,
): ScheduleResult {
  const snapshot = Array.isArray(nodes) ? new NodeListSnapshot(nodes) : (nodes as SchedulerSnapshot);
  try {
    return runCycle(profile, state, pod, snapshot, random);
  } catch (err) {
    if (err instanceof PluginThrew) return thrownResult(err, snapshot.nodes.length);
    throw err;
  }
}

/** Where a cycle notes the plugins whose preFilter said Skip: their filter and addPod/removePod are left out (preemption and nominated pods included). */
export const SKIPPED_FILTERS_KEY = '@skiff/scheduler/skipped-filters';

/** The names of the plugins whose preFilter skipped this cycle (kept in the state, so a cloned state keeps them). */
export function skippedFilterNames(state: CycleState): Set<string> {
  let names = state.get(SKIPPED_FILTERS_KEY) as Set<string> | undefined;
  if (!names) state.set(SKIPPED_FILTERS_KEY, (names = new Set()));
  return names;
}

function isPreFilterResult(value: SchedulingStatus | PreFilterResult): value is PreFilterResult {
  return value !== null && 'nodeNames' in value && !('code' in value);
}

/** Upstream's adaptive default: 50 % of the nodes, less by 1 % per 125 nodes, never under 5 %. */
const MIN_FEASIBLE_NODES_TO_FIND = 100;
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

/**
 * How many feasible nodes are enough to stop filtering (upstream's numFeasibleNodesToFind): every node in
 * a small cluster, else `percentage` of them (adaptive when unset or 0), at least 100.
 */
export function feasibleNodesToFind(totalNodes: number, percentage?: number): number {
  if (totalNodes < MIN_FEASIBLE_NODES_TO_FIND) return totalNodes;
  let adaptive = percentage ?? 0;
  if (adaptive <= 0) adaptive = Math.max(50 - Math.trunc(totalNodes / 125), MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
  if (adaptive >= 100) return totalNodes;
  const count = Math.trunc((totalNodes * adaptive) / 100);
  return Math.max(count, MIN_FEASIBLE_NODES_TO_FIND);
}

function runCycle(profile: SchedulingProfile, state: CycleState, pod: Pod, snapshot: SchedulerSnapshot, random: () => number): ScheduleResult {
  const allNodes = snapshot.nodes;
  const totalNodes = allNodes.length;
  if (totalNodes === 0) return { code: 'UnschedulableAndUnresolvable', message: NO_NODES_MESSAGE, failures: new Map(), totalNodes };

  let allowed: Set<string> | undefined;
  const narrowing: string[] = [];
  let skippedFilters: Set<SchedulerPlugin> | undefined;
  for (const plugin of profile.preFilter) {
    const result = call('PreFilter', plugin.name, () => plugin.preFilter!(state, pod, snapshot));
    if (!result) continue;
    if (!isPreFilterResult(result) && result.code === 'Skip') {
      (skippedFilters ??= new Set()).add(plugin);
      skippedFilterNames(state).add(plugin.name);
      continue;
    }
    if (isPreFilterResult(result)) {
      allowed = allowed ? new Set([...allowed].filter((name) => result.nodeNames.has(name))) : new Set(result.nodeNames);
      narrowing.push(plugin.name);
      continue;
    }
    if (result.code === 'Error') return errorResult('PreFilter', result, plugin.name, totalNodes);
    const reasons = result.reasons.join(', ');
    // Every node gets the same status, so preemption sees why (as upstream does).
    const failures = new Map<string, SchedulingStatus>();
    const stamped = stamp(result, plugin.name);
    for (const info of allNodes) failures.set(info.node.metadata.name!, stamped);
    return {
      code: result.code,
      message: `0/${totalNodes} nodes are available: ${reasons}.`,
      failures,
      totalNodes,
      unschedulablePlugins: new Set([plugin.name]),
    };
  }

  if (allowed && allowed.size === 0) {
    // Upstream's words when the narrowing preFilters leave no node.
    const reason =
      narrowing.length === 1 ? `node(s) didn't satisfy plugin ${narrowing[0]}` : `node(s) didn't satisfy plugin(s) [${narrowing.join(' ')}] simultaneously`;
    const status = { code: 'UnschedulableAndUnresolvable' as const, reasons: [reason], plugin: narrowing[0] };
    const failures = new Map<string, SchedulingStatus>();
    for (const info of allNodes) failures.set(info.node.metadata.name!, status);
    return { code: status.code, message: `0/${totalNodes} nodes are available: ${reason}.`, failures, totalNodes, unschedulablePlugins: new Set(narrowing) };
  }

  // A node preemption nominated is tried first: it is likely the one place the pod fits.
  const nominatedName = pod.status?.nominatedNodeName;
  const nominatedInfo = nominatedName && (!allowed || allowed.has(nominatedName)) ? snapshot.get(nominatedName) : undefined;
  if (nominatedInfo && filterNodes(profile, profile.filter, state, pod, [nominatedInfo], 0, 1).feasible.length === 1) {
    return { nodeName: nominatedName!, score: 0, feasibleNodes: 1 };
  }

  let candidates: readonly NodeInfo[] = allNodes;
  let sampled = true;
  if (allowed) {
    const named: NodeInfo[] = [];
    for (const name of allowed) {
      const info = snapshot.get(name);
      // As upstream: a preFilter naming a node the scheduler does not know is an error of the cycle.
      if (!info)
        return {
          code: 'Error',
          message: `nodeinfo not found for node name "${name}"`,
          failures: new Map(),
          totalNodes,
          plugin: narrowing[0],
          extensionPoint: 'PreFilter',
        };
      named.push(info);
    }
    candidates = named;
    sampled = false;
  }

  const want = sampled ? feasibleNodesToFind(candidates.length, profile.percentageOfNodesToScore) : candidates.length;
  const start = sampled && candidates.length > 0 ? profile.sampling.next % candidates.length : 0;
  const filters = skippedFilters ? profile.filter.filter((plugin) => !skippedFilters.has(plugin)) : profile.filter;
  const filtered = filterNodes(profile, filters, state, pod, candidates, start, want);
  if (sampled) profile.sampling.next = (start + filtered.visited) % Math.max(candidates.length, 1);
  const feasible = filtered.feasible;
  if (feasible.length === 0) {
    const failures = filtered.failures;
    for (const status of failures.values()) {
      if (status?.code === 'Error') return errorResult('Filter', status, status.plugin ?? 'filter', totalNodes);
    }
    const resolvable = [...failures.values()].some((status) => status?.code === 'Unschedulable');
    const unschedulablePlugins = new Set<string>();
    for (const status of failures.values()) if (status?.plugin) unschedulablePlugins.add(status.plugin);
    return {
      code: resolvable ? 'Unschedulable' : 'UnschedulableAndUnresolvable',
      message: fitErrorMessage(totalNodes, failures),
      failures,
      totalNodes,
      unschedulablePlugins,
    };
  }
  if (feasible.length === 1) return { nodeName: feasible[0]!.node.metadata.name!, score: 0, feasibleNodes: 1 };

  let skippedScores: Set<SchedulerPlugin> | undefined;
  for (const plugin of profile.preScore) {
    const status = call('PreScore', plugin.name, () => plugin.preScore!(state, pod, feasible, snapshot));
    if (status?.code === 'Skip') (skippedScores ??= new Set()).add(plugin);
    else if (status) return errorResult('PreScore', stamp(status, plugin.name), plugin.name, totalNodes);
  }
  const scores = skippedScores ? profile.score.filter(({ plugin }) => !skippedScores.has(plugin)) : profile.score;
  const totals = scoreNodes(scores, state, pod, feasible);
  const best = pickBest(totals, random);
  return { nodeName: feasible[best]!.node.metadata.name!, score: totals[best]!, feasibleNodes: feasible.length };
}

interface Filtered {
  feasible: NodeInfo[];
  /** Why each node was rejected — filled only when no node fits. */
  failures: Map<string, SchedulingStatus>;
  /** How many nodes were looked at (sampling resumes after them next cycle). */
  visited: number;
}

/**
 * Walks the nodes from `start` (wrapping) until `want` feasible nodes are found. Rejections are only
 * gathered into a map (with the plugin's name stamped on) when no node fits, so a cluster with many
 * full nodes costs no allocation per rejected node.
 */
function filterNodes(
  profile: SchedulingProfile,
  filters: readonly SchedulerPlugin[],
  state: CycleState,
  pod: Pod,
  nodes: readonly NodeInfo[],
  start: number,
  want: number,
): Filtered {
  const total = nodes.length;
  const feasible: NodeInfo[] = [];
  const rejections: (NonNullable<SchedulingStatus> | undefined)[] = new Array(total);
  const rejectedBy: number[] = new Array(total);
  const nominated = profile.nominatedFilter;
  // One try around the whole loop (not one per call): the indices say which filter threw.
  let f = 0;
  let visited = 0;
  try {
    for (; visited < total && feasible.length < want; visited++) {
      const n = (start + visited) % total;
      const info = nodes[n]!;
      let rejected = false;
      if (nominated) {
        const status = nominated(state, pod, info);
        if (status !== undefined) {
          if (status) {
            if (feasible.length === 0) {
              rejections[n] = status;
              rejectedBy[n] = -1;
            }
            rejected = true;
          }
          if (!rejected) feasible.push(info);
          continue;
        }
      }
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
    if (err instanceof PluginThrew) throw err;
    throw new PluginThrew(filters[f]?.name ?? 'filter', 'Filter', err);
  }
  const failures = new Map<string, SchedulingStatus>();
  if (feasible.length > 0) return { feasible, failures, visited };
  for (let n = 0; n < total; n++) {
    const status = rejections[n];
    if (!status) continue;
    const by = rejectedBy[n]!;
    failures.set(nodes[n]!.node.metadata.name!, by >= 0 ? stamp(status, filters[by]!.name) : status);
  }
  return { feasible, failures, visited };
}

function scoreNodes(scores: readonly ScorePluginEntry[], state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Float64Array {
  const totals = new Float64Array(nodes.length);
  for (const { plugin, weight } of scores) {
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
