import type { Node, NodeCondition } from '@skiff/api';
import { LABEL_REGION, LABEL_ZONE } from './names.js';

export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** The zone a node is in: its region and zone labels together ('' for a node without either). */
export function zoneOf(node: Node): string {
  const labels = node.metadata.labels ?? {};
  const region = labels[LABEL_REGION] ?? '';
  const zone = labels[LABEL_ZONE] ?? '';
  return region === '' && zone === '' ? '' : `${region}:\x00:${zone}`;
}

/**
 * A zone's health from its nodes' Ready conditions (undefined for a node without one): fully disrupted
 * when no node is ready, partly when more than two are not and they make up at least `unhealthyThreshold`
 * of the zone.
 */
export function zoneState(readyConditions: readonly (NodeCondition | undefined)[], unhealthyThreshold: number): { notReady: number; state: ZoneState } {
  const ready = readyConditions.filter((c) => c?.status === 'True').length;
  const notReady = readyConditions.length - ready;
  if (ready === 0 && notReady > 0) return { notReady, state: 'FullDisruption' };
  if (notReady > 2 && notReady / readyConditions.length >= unhealthyThreshold) return { notReady, state: 'PartialDisruption' };
  return { notReady, state: 'Normal' };
}

/** A token bucket holding at most one token, refilled at `qps` per second; 0 never lets anything through. */
export class RateLimiter {
  private tokens = 1;
  private lastMs = Date.now();

  constructor(private qps: number) {}

  /** Takes a token if there is one. */
  tryAccept(nowMs = Date.now()): boolean {
    if (this.qps <= 0) return false;
    this.tokens = Math.min(1, this.tokens + ((nowMs - this.lastMs) / 1000) * this.qps);
    this.lastMs = nowMs;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** A new rate, starting again with a full bucket (as upstream swaps in a new limiter). */
  setRate(qps: number): void {
    if (qps === this.qps) return;
    this.qps = qps;
    this.tokens = 1;
    this.lastMs = Date.now();
  }

  get rate(): number {
    return this.qps;
  }
}
