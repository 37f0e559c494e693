import type { Lease, Node, NodeCondition } from '@skiff/api';
import { kubeTime } from '@skiff/controller-manager';
import { CONDITION, CONDITIONS_SET_UNKNOWN, SILENT_KUBELET } from './names.js';
import { condition } from './taints.js';

export interface GracePeriods {
  /** How long a node that has posted status may stay silent. */
  monitorMs: number;
  /** How long a node that never posted a Ready condition has from its creation. */
  startupMs: number;
}

/** What this controller last saw of a node's heartbeats. */
interface HealthRecord {
  /** The Ready condition as last seen changing heartbeat (undefined while the node has none). */
  ready: NodeCondition | undefined;
  /** When this controller last heard from the node (a new heartbeat time or a renewed Lease). */
  probeMs: number;
  /** When the Ready condition was last seen to transition. */
  readyTransitionMs: number;
  /** renewTime of the node's Lease as last seen. */
  leaseRenewMs: number | undefined;
}

export interface HealthVerdict {
  /** The Ready condition as the node showed it (a stand-in Unknown one when it has none). */
  observed: NodeCondition;
  /** The Ready condition after this pass: the node's, or the Unknown one `write` sets. */
  current: NodeCondition | undefined;
  /** The node with its silent kubelet's conditions set to Unknown, to be written as its status. */
  write?: Node;
}

const timeMs = (time: string | null | undefined): number => (time ? Date.parse(time) : NaN);

/**
 * Judges nodes' health the way the node lifecycle controller does: a node is heard from when its Ready
 * condition carries a new heartbeat time or its Lease a later renewTime, both timed by this controller's
 * own clock. A node not heard from for its grace period gets its Ready, MemoryPressure, DiskPressure and
 * PIDPressure conditions set to Unknown.
 */
export class NodeHealthTracker {
  private readonly records = new Map<string, HealthRecord>();

  constructor(private readonly grace: GracePeriods) {}

  judge(node: Node, lease: Lease | undefined, nowMs: number): HealthVerdict {
    const name = node.metadata.name!;
    const currentReady = condition(node, CONDITION.READY);
    const createdMs = timeMs(node.metadata.creationTimestamp) || nowMs;
    let record = this.records.get(name);
    let observed: NodeCondition;
    let graceMs: number;
    if (!currentReady) {
      observed = {
        type: CONDITION.READY,
        status: 'Unknown',
        lastHeartbeatTime: node.metadata.creationTimestamp ?? null,
        lastTransitionTime: node.metadata.creationTimestamp ?? null,
      };
      graceMs = this.grace.startupMs;
      record = record
        ? { ...{}, ...record, ready: undefined }
        : { ready: undefined, probeMs: createdMs, readyTransitionMs: createdMs, leaseRenewMs: undefined };
    } else {
      observed = currentReady;
      graceMs = this.grace.monitorMs;
      const saved = record?.ready;
      if (!record || !saved) {
        record = { ready: currentReady, probeMs: nowMs, readyTransitionMs: nowMs, leaseRenewMs: record?.leaseRenewMs };
      } else if (saved.lastHeartbeatTime !== currentReady.lastHeartbeatTime) {
        const transitioned = saved.lastTransitionTime !== currentReady.lastTransitionTime;
        record = { ...{}, ...record, ready: currentReady, probeMs: nowMs, readyTransitionMs: transitioned ? nowMs : record.readyTransitionMs };
      }
    }
    const renewMs = timeMs(lease?.spec?.renewTime);
    if (!Number.isNaN(renewMs) && (record.leaseRenewMs === undefined || record.leaseRenewMs < renewMs)) {
      record = { ...{}, ...record, leaseRenewMs: renewMs, probeMs: nowMs };
    }
    this.records.set(name, record);

    if (nowMs <= record.probeMs + graceMs) return { observed, current: currentReady };
    const silent = withSilentConditions(node, kubeTime(nowMs));
    const silentReady = condition(silent, CONDITION.READY)!;
    if (sameCondition(silentReady, observed)) return { observed, current: currentReady };
    return { observed, current: silentReady, write: silent };
  }

  /** After the Unknown conditions of `judge` were written. */
  written(node: Node, nowMs: number): void {
    const record = this.records.get(node.metadata.name!);
    if (record) this.records.set(node.metadata.name!, { ...{}, ...record, ready: condition(node, CONDITION.READY), readyTransitionMs: nowMs });
  }

  forget(name: string): void {
    this.records.delete(name);
  }

  /** Counts every node as heard from now (leaving the all-zones-disrupted mode gives each a fresh grace period). */
  heardFromAll(nowMs: number): void {
    for (const [name, record] of this.records) this.records.set(name, { ...{}, ...record, probeMs: nowMs, readyTransitionMs: nowMs });
  }
}

/** A copy of the node with the conditions a silent kubelet leaves behind set to Unknown (added when missing). */
function withSilentConditions(node: Node, now: string): Node {
  const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c }));
  for (const type of CONDITIONS_SET_UNKNOWN) {
    const existing = conditions.find((c) => c.type === type);
    if (!existing) {
      conditions.push({
        type,
        status: 'Unknown',
        reason: SILENT_KUBELET.NEVER_REASON,
        message: SILENT_KUBELET.NEVER_MESSAGE,
        lastHeartbeatTime: node.metadata.creationTimestamp ?? null,
        lastTransitionTime: now,
      });
    } else if (existing.status !== 'Unknown') {
      Object.assign(existing, { status: 'Unknown', reason: SILENT_KUBELET.STOPPED_REASON, message: SILENT_KUBELET.STOPPED_MESSAGE, lastTransitionTime: now });
    }
  }
  return { ...{}, ...node, status: { ...{}, ...node.status, conditions } };
}

function sameCondition(a: NodeCondition, b: NodeCondition): boolean {
  return (
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    (a.lastHeartbeatTime ?? '') === (b.lastHeartbeatTime ?? '') &&
    (a.lastTransitionTime ?? '') === (b.lastTransitionTime ?? '')
  );
}
