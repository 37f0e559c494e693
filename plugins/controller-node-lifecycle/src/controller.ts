import { errorMessage, isApiError, RESOURCES, type Lease, type Node, type NodeCondition, type Pod, type Taint } from '@skiff/api';
import { sleep, WorkQueue } from '@skiff/client';
import { kubeTime, runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { NodeHealthTracker, type HealthVerdict } from './health.js';
import {
  CONDITION,
  CONTROLLER_NAME,
  EVENT_REASON,
  LABEL_EXCLUDE_DISRUPTION,
  NO_EXECUTE_TAINTING_PERIOD_MS,
  NODE_LEASE_NAMESPACE,
  POD_NODE_NAME_INDEX,
  WRITE_ATTEMPTS,
} from './names.js';
import { TaintEvictionManager } from './taint-manager.js';
import { conditionTaintChanges, hasTaint, NOT_READY_NO_EXECUTE, swapTaints, UNREACHABLE_NO_EXECUTE } from './taints.js';
import { RateLimiter, zoneOf, zoneState, type ZoneState } from './zones.js';

/** The plugin's options in the units the controller works in. */
export interface NodeLifecycleSettings {
  /** How often every node's health is judged. */
  nodeMonitorPeriodMs: number;
  /** How long a node that has posted status may stay silent. */
  nodeMonitorGracePeriodMs: number;
  /** The same for a node that never posted a Ready condition, counted from its creation. */
  nodeStartupGracePeriodMs: number;
  /** Nodes per second given NoExecute taints in a healthy zone (and in fully disrupted ones while others are not). */
  nodeEvictionRate: number;
  /** The same in a partly disrupted zone of a large cluster. */
  secondaryNodeEvictionRate: number;
  /** Nodes a zone must have for the secondary rate; smaller partly disrupted zones get no NoExecute taints. */
  largeClusterSizeThreshold: number;
  /** The share of not-ready nodes (beyond two) that makes a zone partly disrupted. */
  unhealthyZoneThreshold: number;
}

/** Nodes waiting in one zone for their NoExecute not-ready / unreachable taint, and the rate they get it at. */
interface ZoneTainter {
  limiter: RateLimiter;
  queue: Set<string>;
}

/**
 * The node lifecycle controller of kube-controller-manager 1.28: watches each node's heartbeats (its
 * Ready condition and its Lease in kube-node-lease) and marks a silent node's conditions Unknown; keeps the
 * NoSchedule taints of the node's conditions and cordon in step; gives not-ready and unreachable nodes
 * their NoExecute taint at a rate set by the health of their zone; and runs the taint manager that evicts
 * the pods those taints do not tolerate.
 */
export class NodeLifecycleController {
  private readonly nodes: Informer<Node>;
  private readonly pods: Informer<Pod>;
  private readonly leases: Informer<Lease>;
  /** Nodes whose condition taints need a look. */
  private readonly taintQueue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly health: NodeHealthTracker;
  private readonly known = new Map<string, Node>();
  private readonly tainters = new Map<string, ZoneTainter>();
  private readonly zoneStates = new Map<string, ZoneState>();
  /** Nodes whose pods could not all be marked not ready; tried again on the next pass. */
  private readonly markPodsRetry = new Set<string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly settings: NodeLifecycleSettings,
  ) {
    this.nodes = ctx.informers.informer<Node>(RESOURCES.nodes);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.leases = ctx.informers.informer<Lease>(RESOURCES.leases, { namespace: NODE_LEASE_NAMESPACE });
    this.pods.addIndex(POD_NODE_NAME_INDEX, (pod) => (pod.spec.nodeName ? [pod.spec.nodeName] : []));
    this.health = new NodeHealthTracker({ monitorMs: settings.nodeMonitorGracePeriodMs, startupMs: settings.nodeStartupGracePeriodMs });
    const enqueue = (node: Node) => this.taintQueue.add(node.metadata.name!);
    this.nodes.addHandlers({ add: enqueue, update: (_old, node) => enqueue(node) });
    new TaintEvictionManager(ctx, this.nodes, this.pods);
  }

  /** Waits for the caches, then monitors node health, taints and evicts until the signal aborts. */
  async run(workers: number): Promise<void> {
    const loops: Promise<void>[] = [];
    await runWhenSynced(this.ctx, {
      informers: [this.nodes, this.pods, this.leases],
      queue: this.taintQueue,
      workers,
      sync: (name) => this.syncConditionTaints(name),
      beforeWorkers: () => {
        loops.push(this.every(this.settings.nodeMonitorPeriodMs, () => this.monitorNodeHealth()));
        loops.push(this.every(NO_EXECUTE_TAINTING_PERIOD_MS, () => this.taintQueuedNodes()));
      },
    });
    await Promise.all(loops);
  }

  /** Runs `pass` now and then `periodMs` after each pass ends, until the signal aborts; a failing pass is logged. */
  private async every(periodMs: number, pass: () => Promise<void>): Promise<void> {
    const { signal, logger } = this.ctx;
    while (!signal.aborted) {
      await pass().catch((err: unknown) => logger.warn({ err }, 'node lifecycle pass failed'));
      await sleep(periodMs, signal);
    }
  }

  /** The NoSchedule taints of one node's conditions and cordon, made to match them. */
  syncConditionTaints(name: string): Promise<void> {
    return this.changeTaints(name, (node) => conditionTaintChanges(node));
  }

  /** One health pass over every node: Unknown conditions, NoExecute taints, pods marked not ready, zone states. */
  async monitorNodeHealth(): Promise<void> {
    const nodes = this.nodes.list();
    this.noticeAddedAndRemoved(nodes);
    const zoneConditions = new Map<string, (NodeCondition | undefined)[]>();
    for (const node of nodes) {
      if (this.ctx.signal.aborted) return;
      const verdict = await this.judge(node);
      if (!verdict) continue;
      if (node.metadata.labels?.[LABEL_EXCLUDE_DISRUPTION] === undefined) {
        const zone = zoneOf(node);
        zoneConditions.set(zone, [...(zoneConditions.get(zone) ?? []), verdict.current]);
      }
      if (!verdict.current) continue;
      const name = node.metadata.name!;
      await this.noExecuteTaintFor(node, verdict.observed).catch((err: unknown) =>
        this.ctx.logger.warn({ err, node: name }, 'could not change the NoExecute taints of a node'),
      );
      const becameNotReady = verdict.current.status !== 'True' && verdict.observed.status === 'True';
      if (becameNotReady) this.ctx.recorder.event(node, 'Normal', EVENT_REASON.NODE_NOT_READY, `Node ${name} status is now: ${EVENT_REASON.NODE_NOT_READY}`);
      if (becameNotReady || (this.markPodsRetry.has(name) && verdict.observed.status !== 'True')) {
        if (!(await this.markPodsNotReady(name))) {
          this.markPodsRetry.add(name);
          continue;
        }
      }
      this.markPodsRetry.delete(name);
    }
    await this.handleDisruption(zoneConditions, nodes);
  }

  private noticeAddedAndRemoved(nodes: Node[]): void {
    const names = new Set(nodes.map((node) => node.metadata.name!));
    for (const node of nodes) {
      this.tainterOf(zoneOf(node));
      const name = node.metadata.name!;
      if (this.known.has(name)) continue;
      this.known.set(name, node);
      this.ctx.recorder.event(node, 'Normal', EVENT_REASON.REGISTERED_NODE, `Node ${name} event: Registered Node ${name} in Controller`);
      this.markReachable(node).catch((err: unknown) => this.ctx.logger.warn({ err, node: name }, 'could not take the NoExecute taints off a node'));
    }
    for (const [name, node] of this.known) {
      if (names.has(name)) continue;
      this.known.delete(name);
      this.health.forget(name);
      this.markPodsRetry.delete(name);
      this.ctx.recorder.event(node, 'Normal', EVENT_REASON.REMOVING_NODE, `Node ${name} event: Removing Node ${name} from Controller`);
    }
  }

  /** Judges a node's health and writes the Unknown conditions of a silent one, reading it again after a conflict. */
  private async judge(cached: Node): Promise<HealthVerdict | undefined> {
    const name = cached.metadata.name!;
    let node = cached;
    for (let attempt = 1; ; attempt++) {
      const nowMs = Date.now();
      const verdict = this.health.judge(node, this.leases.get(`${NODE_LEASE_NAMESPACE}/${name}`), nowMs);
      if (!verdict.write) return verdict;
      try {
        const written = await this.ctx.client.updateStatus<Node>(RESOURCES.nodes, verdict.write);
        this.health.written(written, nowMs);
        return verdict;
      } catch (err) {
        if (isApiError(err, 'NotFound')) return undefined;
        if (attempt >= WRITE_ATTEMPTS) {
          this.ctx.logger.warn({ err, node: name }, 'could not update the health of a node; none of its pods are evicted this pass');
          return undefined;
        }
      }
      try {
        node = await this.ctx.client.get<Node>(RESOURCES.nodes, name);
      } catch (err) {
        this.ctx.logger.warn({ err, node: name }, 'could not read a node again to retry its health update');
        return undefined;
      }
    }
  }

  /** Upstream's processTaintBaseEviction: the NoExecute taint of the Ready condition the node showed. */
  private async noExecuteTaintFor(node: Node, observed: NodeCondition): Promise<void> {
    if (observed.status === 'True') return this.markReachable(node);
    const [wanted, opposite] = observed.status === 'False' ? [NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE] : [UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE];
    // Changing one NoExecute taint for the other evicts nothing new, so it is not rate limited.
    if (hasTaint(node, opposite)) {
      await this.changeTaints(node.metadata.name!, () => ({ add: [wanted], remove: [opposite] }));
      return;
    }
    if (!hasTaint(node, wanted)) this.tainterOf(zoneOf(node)).queue.add(node.metadata.name!);
  }

  /** The rate-limited pass giving queued nodes the NoExecute taint of their Ready condition. */
  private async taintQueuedNodes(): Promise<void> {
    for (const tainter of this.tainters.values()) {
      for (const name of [...tainter.queue]) {
        if (!tainter.limiter.tryAccept()) break;
        tainter.queue.delete(name);
        const node = this.nodes.get(name);
        const ready = node?.status?.conditions?.find((c) => c.type === CONDITION.READY);
        if (!node || !ready || ready.status === 'True') continue;
        const [wanted, opposite] = ready.status === 'False' ? [NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE] : [UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE];
        try {
          await this.changeTaints(name, () => ({ add: [wanted], remove: [opposite] }));
        } catch (err) {
          this.ctx.logger.warn({ err, node: name }, 'could not give a node its NoExecute taint; it stays queued');
          tainter.queue.add(name);
        }
      }
    }
  }

  /** Takes the NoExecute not-ready and unreachable taints off a node and out of its zone's queue. */
  private async markReachable(node: Node): Promise<void> {
    const name = node.metadata.name!;
    this.tainters.get(zoneOf(node))?.queue.delete(name);
    if (!hasTaint(node, NOT_READY_NO_EXECUTE) && !hasTaint(node, UNREACHABLE_NO_EXECUTE)) return;
    await this.changeTaints(name, () => ({ add: [], remove: [NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE] }));
  }

  /** Sets the Ready condition of the node's pods to False (they are no longer known to be serving). */
  private async markPodsNotReady(nodeName: string): Promise<boolean> {
    let allMarked = true;
    for (const pod of this.pods.byIndex(POD_NODE_NAME_INDEX, nodeName)) {
      if (pod.spec.nodeName !== nodeName) continue;
      const conditions = pod.status?.conditions ?? [];
      const ready = conditions.find((c) => c.type === CONDITION.READY);
      if (!ready || ready.status === 'False') continue;
      const marked = { ...{}, ...ready, status: 'False', lastTransitionTime: kubeTime(Date.now()) };
      try {
        await this.ctx.client.updateStatus<Pod>(RESOURCES.pods, {
          ...{},
          ...pod,
          status: { ...{}, ...pod.status, conditions: conditions.map((c) => (c === ready ? marked : c)) },
        });
      } catch (err) {
        if (isApiError(err, 'NotFound')) continue;
        this.ctx.logger.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, err: errorMessage(err) }, 'could not mark a pod not ready');
        allMarked = false;
      }
      this.ctx.recorder.event(pod, 'Warning', EVENT_REASON.NODE_NOT_READY, 'Node is not ready');
    }
    return allMarked;
  }

  /**
   * Zone health decides the NoExecute tainting rate. When every zone is fully disrupted the fault is more
   * likely the control plane's than the nodes', so NoExecute taints are taken off and none are added until
   * some node is ready again; then every node gets a fresh grace period.
   */
  private async handleDisruption(zoneConditions: Map<string, (NodeCondition | undefined)[]>, nodes: Node[]): Promise<void> {
    const newStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, conditions] of zoneConditions) {
      const { state } = zoneState(conditions, this.settings.unhealthyZoneThreshold);
      if (state !== 'FullDisruption') allAreFullyDisrupted = false;
      newStates.set(zone, state);
      if (!this.zoneStates.has(zone)) this.zoneStates.set(zone, 'Initial');
    }
    let allWereFullyDisrupted = true;
    for (const [zone, state] of this.zoneStates) {
      if (!zoneConditions.has(zone)) this.zoneStates.delete(zone);
      else if (state !== 'FullDisruption') allWereFullyDisrupted = false;
    }
    if (allAreFullyDisrupted && allWereFullyDisrupted) return;

    if (allAreFullyDisrupted) {
      this.ctx.logger.info('every node is not ready: NoExecute tainting stops until one is ready again');
      for (const node of nodes) {
        await this.markReachable(node).catch((err: unknown) =>
          this.ctx.logger.warn({ err, node: node.metadata.name }, 'could not take the NoExecute taints off a node'),
        );
      }
      for (const zone of this.zoneStates.keys()) {
        this.tainterOf(zone).limiter.setRate(0);
        this.zoneStates.set(zone, 'FullDisruption');
      }
      return;
    }
    if (allWereFullyDisrupted) this.health.heardFromAll(Date.now());
    for (const [zone, state] of this.zoneStates) {
      const newState = newStates.get(zone)!;
      if (state === newState && !allWereFullyDisrupted) continue;
      this.tainterOf(zone).limiter.setRate(this.zoneRate(zoneConditions.get(zone)!.length, newState));
      this.zoneStates.set(zone, newState);
    }
  }

  private zoneRate(zoneSize: number, state: ZoneState): number {
    if (state !== 'PartialDisruption') return this.settings.nodeEvictionRate;
    return zoneSize > this.settings.largeClusterSizeThreshold ? this.settings.secondaryNodeEvictionRate : 0;
  }

  private tainterOf(zone: string): ZoneTainter {
    let tainter = this.tainters.get(zone);
    if (!tainter) {
      tainter = { limiter: new RateLimiter(this.settings.nodeEvictionRate), queue: new Set() };
      this.tainters.set(zone, tainter);
    }
    return tainter;
  }

  /**
   * Adds and removes taints of a node (`plan` reads the node: the cached one first, the server's after a
   * conflict). A node that is gone needs nothing; a write that keeps losing to others throws the conflict.
   */
  private async changeTaints(name: string, plan: (node: Node) => { add: Taint[]; remove: Taint[] }): Promise<void> {
    let node = this.nodes.get(name);
    for (let attempt = 1; ; attempt++) {
      try {
        node ??= await this.ctx.client.get<Node>(RESOURCES.nodes, name);
        const { add, remove } = plan(node);
        const taints = swapTaints(node.spec?.taints ?? [], add, remove, kubeTime(Date.now()));
        if (!taints) return;
        const { taints: _replaced, ...rest } = node.spec ?? {};
        const spec = taints.length > 0 ? { ...{}, ...rest, taints } : rest;
        await this.ctx.client.update<Node>(RESOURCES.nodes, { ...{}, ...node, spec });
        return;
      } catch (err) {
        if (isApiError(err, 'NotFound')) return;
        if (!isApiError(err, 'Conflict') || attempt >= WRITE_ATTEMPTS) throw err;
        node = undefined;
      }
    }
  }
}
