import { RESOURCES, errorMessage, labelSelectorFromObject, type Pod, type PodDisruptionBudget } from '@skiff/api';
import type { CycleState, Informer, NodeInfo, PostFilterResult, SchedulerHandle, SchedulerPlugin, SchedulingStatus } from '@skiff/kernel';
import { cloneCycleState, cloneNodeInfo, addPodToNodeInfo, podPriority, removePodFromNodeInfo } from '@skiff/scheduler';
import {
  DEFAULT_PREEMPTION,
  DISRUPTION_TARGET,
  NO_CANDIDATE,
  NO_VICTIMS,
  NOT_ELIGIBLE_NEVER,
  NOT_ELIGIBLE_TERMINATING,
  NOT_HELPFUL,
  PREEMPTION_BY_SCHEDULER,
} from './names.js';
import { checkArgs, type DefaultPreemptionOptions } from './options.js';

/** A node where evicting `victims` (most important first) lets the pod fit. */
export interface Candidate {
  nodeName: string;
  /** The pods to evict: those a PodDisruptionBudget protects first, each group most important first. */
  victims: Pod[];
  /** How many victims' eviction breaks a PodDisruptionBudget. */
  pdbViolations: number;
}

type Status = NonNullable<SchedulingStatus>;

function podKey(pod: Pod): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

/** When the pod started, in ms; a pod not started yet counts as starting now (upstream's GetPodStartTime). */
function startTime(pod: Pod, now: number): number {
  const start = pod.status?.startTime;
  return start ? Date.parse(start) : now;
}

/** Higher priority first, then the one that started earlier (upstream's MoreImportantPod). */
function moreImportantFirst(now: number): (a: Pod, b: Pod) => number {
  return (a, b) => podPriority(b) - podPriority(a) || startTime(a, now) - startTime(b, now);
}

/** Set by a preemption that is still under way: the victim is terminating because of it. */
function terminatingByPreemption(pod: Pod): boolean {
  if (!pod.metadata.deletionTimestamp) return false;
  const condition = pod.status?.conditions?.find((c) => c.type === DISRUPTION_TARGET);
  return condition?.status === 'True' && condition.reason === PREEMPTION_BY_SCHEDULER;
}

/**
 * Splits pods (kept in order) into those whose eviction would take a matching PodDisruptionBudget below
 * zero allowed disruptions and the rest; a pod already listed in a budget's disruptedPods is not counted again.
 */
export function splitByPdbViolation(pods: readonly Pod[], pdbs: readonly PodDisruptionBudget[]): { violating: Pod[]; nonViolating: Pod[] } {
  const allowed = pdbs.map((pdb) => pdb.status?.disruptionsAllowed ?? 0);
  const selectors = pdbs.map((pdb) => {
    try {
      return labelSelectorFromObject(pdb.spec?.selector);
    } catch {
      return undefined;
    }
  });
  const violating: Pod[] = [];
  const nonViolating: Pod[] = [];
  for (const pod of pods) {
    let violated = false;
    const labels = pod.metadata.labels;
    if (labels && Object.keys(labels).length > 0) {
      pdbs.forEach((pdb, i) => {
        const selector = selectors[i];
        if (pdb.metadata.namespace !== pod.metadata.namespace || !selector || selector.empty || !selector.matches(labels)) return;
        if (pdb.status?.disruptedPods && pod.metadata.name! in pdb.status.disruptedPods) return;
        if (--allowed[i]! < 0) violated = true;
      });
    }
    (violated ? violating : nonViolating).push(pod);
  }
  return { violating, nonViolating };
}

/**
 * The node to preempt on (upstream's pickOneNodeForPreemption): fewest PDB violations, then the lowest
 * highest-priority victim, the smallest sum of priorities, the fewest victims, the latest start among the
 * highest-priority victims, then the first.
 */
export function pickCandidate(candidates: readonly Candidate[], now = Date.now()): Candidate | undefined {
  if (candidates.length <= 1) return candidates[0];
  const criteria: ((c: Candidate) => number)[] = [
    (c) => -c.pdbViolations,
    (c) => -podPriority(c.victims[0]!),
    // Shifted by 2^31 so that many negative priorities never beat fewer of them.
    (c) => -c.victims.reduce((sum, pod) => sum + podPriority(pod) + 2 ** 31, 0),
    (c) => -c.victims.length,
    (c) => earliestStartOfTopPriority(c.victims, now),
  ];
  let left = [...candidates];
  for (const score of criteria) {
    let best = -Infinity;
    let kept: Candidate[] = [];
    for (const candidate of left) {
      const value = score(candidate);
      if (value > best) {
        best = value;
        kept = [candidate];
      } else if (value === best) kept.push(candidate);
    }
    if (kept.length === 1) return kept[0];
    left = kept;
  }
  return left[0];
}

function earliestStartOfTopPriority(victims: readonly Pod[], now: number): number {
  let top = -Infinity;
  let earliest = now;
  for (const pod of victims) {
    const priority = podPriority(pod);
    const start = startTime(pod, now);
    if (priority > top) {
      top = priority;
      earliest = start;
    } else if (priority === top && start < earliest) earliest = start;
  }
  return earliest;
}

/** `count reason` over the nodes, sorted, as Kubernetes' FitError builds its message. */
function fitMessage(statuses: ReadonlyMap<string, Status>): string {
  const histogram = new Map<string, number>();
  for (const status of statuses.values()) for (const reason of status.reasons) histogram.set(reason, (histogram.get(reason) ?? 0) + 1);
  const reasons = [...histogram].map(([reason, count]) => `${count} ${reason}`).sort();
  return `0/${statuses.size} nodes are available: ${reasons.join(', ')}.`;
}

/** How the scheduler shows a postFilter's words: after the filter message, each followed by a period (upstream's " %v."). */
function shown(message: string): string {
  return `preemption: ${message}.`;
}

class DefaultPreemption implements SchedulerPlugin {
  readonly name = DEFAULT_PREEMPTION;
  private handle: SchedulerHandle | undefined;
  private pods: Informer<Pod> | undefined;
  private pdbs: Informer<PodDisruptionBudget> | undefined;

  constructor(private readonly args: DefaultPreemptionOptions) {}

  withArgs(given: Record<string, unknown>): SchedulerPlugin {
    return new DefaultPreemption(checkArgs({ ...{}, ...this.args, ...given }));
  }

  init(handle: SchedulerHandle): void {
    this.handle = handle;
    this.pods = handle.informers.informer<Pod>(RESOURCES.pods);
    this.pdbs = handle.informers.informer<PodDisruptionBudget>(RESOURCES.poddisruptionbudgets);
  }

  async postFilter(state: CycleState, given: Pod, failures: Map<string, SchedulingStatus>): Promise<SchedulingStatus | PostFilterResult> {
    const handle = this.handle;
    if (!handle) return { code: 'Error', reasons: [`${DEFAULT_PREEMPTION} was not initialised`] };
    const pod = this.pods?.get(podKey(given)) ?? given;
    const ineligible = this.ineligibility(handle, pod, failures);
    if (ineligible) return { code: 'Unschedulable', reasons: [shown(ineligible)] };

    const { candidates, statuses, errors } = this.findCandidates(handle, state, pod, failures);
    if (candidates.length === 0) {
      if (errors.length > 0) return { code: 'Error', reasons: errors };
      if (statuses.size === 0) return { code: 'Error', reasons: ['no nodes available'] };
      if (pod.status?.nominatedNodeName) this.clearNomination(handle, [pod]);
      return { code: 'Unschedulable', reasons: [shown(fitMessage(statuses))] };
    }
    const best = pickCandidate(candidates);
    if (!best) return { code: 'Unschedulable', reasons: [shown(NO_CANDIDATE)] };
    const failure = await this.prepare(handle, pod, best);
    if (failure) return { code: 'Error', reasons: [failure] };
    return { nominatedNodeName: best.nodeName, reasons: [] };
  }

  /** Why the pod may not preempt now (upstream's PodEligibleToPreemptOthers), or undefined. */
  private ineligibility(handle: SchedulerHandle, pod: Pod, failures: Map<string, SchedulingStatus>): string | undefined {
    if (pod.spec.preemptionPolicy === 'Never') return NOT_ELIGIBLE_NEVER;
    const nominated = pod.status?.nominatedNodeName;
    if (!nominated || failures.get(nominated)?.code === 'UnschedulableAndUnresolvable') return undefined;
    const info = handle.snapshot().get(nominated);
    const priority = podPriority(pod);
    if (info?.pods.some((other) => podPriority(other) < priority && terminatingByPreemption(other))) return NOT_ELIGIBLE_TERMINATING;
    return undefined;
  }

  /** How many of `nodes` potential nodes to dry-run (upstream's calculateNumCandidates). */
  private candidatesWanted(nodes: number): number {
    const wanted = Math.max(Math.trunc((nodes * this.args.minCandidateNodesPercentage) / 100), this.args.minCandidateNodesAbsolute);
    return Math.min(wanted, nodes);
  }

  private findCandidates(
    handle: SchedulerHandle,
    state: CycleState,
    pod: Pod,
    failures: Map<string, SchedulingStatus>,
  ): { candidates: Candidate[]; statuses: Map<string, Status>; errors: string[] } {
    const statuses = new Map<string, Status>();
    const errors: string[] = [];
    const potential: NodeInfo[] = [];
    for (const info of handle.snapshot().nodes) {
      const name = info.node.metadata.name!;
      if (failures.get(name)?.code === 'UnschedulableAndUnresolvable') statuses.set(name, { code: 'UnschedulableAndUnresolvable', reasons: [NOT_HELPFUL] });
      else potential.push(info);
    }
    if (potential.length === 0) return { candidates: [], statuses, errors };
    const pdbs = this.pdbs?.list() ?? [];
    const offset = Math.floor(Math.random() * potential.length);
    const wanted = this.candidatesWanted(potential.length);
    const nonViolating: Candidate[] = [];
    const violating: Candidate[] = [];
    for (let i = 0; i < potential.length; i++) {
      const info = cloneNodeInfo(potential[(offset + i) % potential.length]!);
      const name = info.node.metadata.name!;
      const result = this.selectVictims(handle, cloneCycleState(state), pod, info, pdbs);
      if ('victims' in result) {
        (result.pdbViolations === 0 ? nonViolating : violating).push({ nodeName: name, ...result });
        if (nonViolating.length > 0 && nonViolating.length + violating.length >= wanted) break;
        continue;
      }
      if (result.code === 'Error') errors.push(...result.reasons);
      statuses.set(name, result);
    }
    return { candidates: [...nonViolating, ...violating], statuses, errors };
  }

  /**
   * The fewest pods to evict from `info` for the pod to fit (upstream's SelectVictimsOnNode): every
   * lower-priority pod out, then each put back, most important first (those a PDB protects before the
   * rest), where the pod still fits. `info` and `state` are the caller's copies.
   */
  private selectVictims(
    handle: SchedulerHandle,
    state: CycleState,
    pod: Pod,
    info: NodeInfo,
    pdbs: readonly PodDisruptionBudget[],
  ): { victims: Pod[]; pdbViolations: number } | Status {
    const priority = podPriority(pod);
    const potential = info.pods.filter((other) => podPriority(other) < priority);
    if (potential.length === 0) return { code: 'UnschedulableAndUnresolvable', reasons: [NO_VICTIMS] };
    const remove = (victim: Pod): Status | null => {
      removePodFromNodeInfo(info, victim);
      return handle.removePod(state, pod, victim, info);
    };
    const add = (victim: Pod): Status | null => {
      addPodToNodeInfo(info, victim);
      return handle.addPod(state, pod, victim, info);
    };
    for (const victim of potential) {
      const failed = remove(victim);
      if (failed) return asError(failed);
    }
    const unfit = handle.runFilters(state, pod, info);
    if (unfit) return unfit;
    potential.sort(moreImportantFirst(Date.now()));
    const { violating, nonViolating } = splitByPdbViolation(potential, pdbs);
    const victims: Pod[] = [];
    let pdbViolations = 0;
    const reprieve = (victim: Pod): boolean | Status => {
      const failed = add(victim);
      if (failed) return asError(failed);
      if (!handle.runFilters(state, pod, info)) return true;
      const undone = remove(victim);
      if (undone) return asError(undone);
      victims.push(victim);
      return false;
    };
    for (const victim of violating) {
      const fits = reprieve(victim);
      if (typeof fits !== 'boolean') return fits;
      if (!fits) pdbViolations++;
    }
    for (const victim of nonViolating) {
      const fits = reprieve(victim);
      if (typeof fits !== 'boolean') return fits;
    }
    if (victims.length === 0) return { code: 'Error', reasons: [`expected at least one victim pod on node "${info.node.metadata.name}"`] };
    return { victims, pdbViolations };
  }

  /**
   * Evicts the victims (DisruptionTarget condition, then a graceful delete), records a Preempted event on
   * each and clears the nomination of lower-priority pods nominated to the node. Returns why it failed.
   */
  private async prepare(handle: SchedulerHandle, pod: Pod, candidate: Candidate): Promise<string | undefined> {
    const schedulerName = pod.spec.schedulerName || handle.profileName;
    const message = `${schedulerName}: preempting to accommodate a higher priority pod`;
    const results = await Promise.allSettled(
      candidate.victims.map(async (victim) => {
        const { name, namespace } = victim.metadata;
        const current = victim.status?.conditions?.find((c) => c.type === DISRUPTION_TARGET);
        if (current?.status !== 'True' || current.reason !== PREEMPTION_BY_SCHEDULER || current.message !== message) {
          const condition = {
            type: DISRUPTION_TARGET,
            status: 'True',
            reason: PREEMPTION_BY_SCHEDULER,
            message,
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          };
          await handle.client.patch(
            RESOURCES.pods,
            name!,
            { status: { conditions: [condition] } },
            { namespace, patchType: 'strategic', subresource: 'status' },
          );
        }
        await handle.client.delete(RESOURCES.pods, name!, namespace);
        handle.logger.debug({ preemptor: podKey(pod), victim: podKey(victim), node: candidate.nodeName }, 'preemptor pod preempted victim pod');
        handle.recorder.event(victim, 'Normal', 'Preempted', `Preempted by a pod on node ${candidate.nodeName}`);
      }),
    );
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) return errorMessage(failed.reason);
    const priority = podPriority(pod);
    this.clearNomination(
      handle,
      handle.nominatedPods(candidate.nodeName).filter((other) => podPriority(other) < priority),
    );
    return undefined;
  }

  /** Drops status.nominatedNodeName of these pods; a failure is logged, not fatal (as upstream). */
  private clearNomination(handle: SchedulerHandle, pods: readonly Pod[]): void {
    for (const pod of pods) {
      handle.client
        .patch(
          RESOURCES.pods,
          pod.metadata.name!,
          { status: { nominatedNodeName: null } },
          { namespace: pod.metadata.namespace, patchType: 'merge', subresource: 'status' },
        )
        .catch((err: unknown) => handle.logger.warn({ err, pod: podKey(pod) }, "could not clear the pod's nominatedNodeName"));
    }
  }
}

function asError(status: Status): Status {
  return { ...{}, ...status, code: 'Error' };
}

/** Upstream's DefaultPreemption PostFilter, configured with DefaultPreemptionArgs. */
export function createDefaultPreemption(options: Partial<DefaultPreemptionOptions> = {}): SchedulerPlugin {
  return new DefaultPreemption(checkArgs(options));
}
