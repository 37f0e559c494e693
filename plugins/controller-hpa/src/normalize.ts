// The pure part after the metrics: stabilization windows over recent recommendations, the rate limits of
// the scaling policies over recent scale events, and the min/max clamp — with the condition each step leaves.
import type { HorizontalPodAutoscalerBehavior, HPAScalingPolicy, HPAScalingRules } from '@skiff/api';
import { LEGACY_SCALE_UP_FACTOR, LEGACY_SCALE_UP_MINIMUM } from './names.js';

/** What the metrics asked for, and when. */
export interface Recommendation {
  replicas: number;
  at: number;
}

/** A rescale the controller made: by how many replicas (always positive), and when. */
export interface ScaleEvent {
  change: number;
  at: number;
}

/** What the controller remembers of one autoscaler between syncs. */
export interface ScaleHistory {
  recommendations: Recommendation[];
  scaleUps: ScaleEvent[];
  scaleDowns: ScaleEvent[];
}

export const emptyHistory = (): ScaleHistory => ({ recommendations: [], scaleUps: [], scaleDowns: [] });

export interface Verdict {
  reason: string;
  message: string;
}

export interface Normalized {
  replicas: number;
  /** The AbleToScale=True condition's reason: whether a stabilization window held the recommendation back. */
  ableToScale: Verdict;
  /** ScalingLimited: True when a rate limit or min/max changed the stabilized recommendation. */
  scalingLimited: Verdict & { limited: boolean };
}

export interface NormalizeInput {
  currentReplicas: number;
  /** The metrics' recommendation. */
  desiredReplicas: number;
  minReplicas: number;
  maxReplicas: number;
  behavior?: HorizontalPodAutoscalerBehavior;
  /** The scale-down stabilization window of autoscalers that do not set their own. */
  downscaleStabilizationMs: number;
  now: number;
}

export const VERDICT = Object.freeze({
  readyForNewScale: { reason: 'ReadyForNewScale', message: 'recommended size matches current size' },
  scaleDownStabilized: {
    reason: 'ScaleDownStabilized',
    message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
  },
  scaleUpStabilized: {
    reason: 'ScaleUpStabilized',
    message: 'recent recommendations were lower than current one, applying the lowest recent recommendation',
  },
  scaleUpLimit: { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' },
  scaleDownLimit: { reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' },
  tooManyReplicas: { reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' },
  tooFewReplicas: { reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' },
  desiredWithinRange: { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' },
} satisfies Record<string, Verdict>);

/** The API server's defaults for a behavior section, for autoscalers stored without them. */
const DEFAULT_SCALE_UP: Required<Pick<HPAScalingRules, 'selectPolicy' | 'policies' | 'stabilizationWindowSeconds'>> = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
};
const DEFAULT_SCALE_DOWN: Required<Pick<HPAScalingRules, 'selectPolicy' | 'policies'>> = {
  selectPolicy: 'Max',
  policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
};

interface Rules {
  windowMs: number;
  selectPolicy: string;
  policies: HPAScalingPolicy[];
}

function rulesOf(rules: HPAScalingRules | undefined, defaults: HPAScalingRules, defaultWindowMs: number): Rules {
  const window = rules?.stabilizationWindowSeconds ?? defaults.stabilizationWindowSeconds;
  return {
    windowMs: window === undefined ? defaultWindowMs : window * 1000,
    selectPolicy: rules?.selectPolicy ?? defaults.selectPolicy!,
    policies: rules?.policies ?? defaults.policies!,
  };
}

const changeWithin = (events: readonly ScaleEvent[], periodSeconds: number, now: number) =>
  events.reduce((sum, event) => (event.at > now - periodSeconds * 1000 ? sum + event.change : sum), 0);

/** The replica count each policy allows at the end of its period, counting from the replicas at its start. */
function policyLimit(direction: 'up' | 'down', current: number, rules: Rules, history: ScaleHistory, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  // Max: the policy allowing the biggest change; Min: the smallest.
  const biggest = rules.selectPolicy !== 'Min';
  let limit: number | undefined;
  for (const policy of rules.policies) {
    const periodStart = current - changeWithin(history.scaleUps, policy.periodSeconds, now) + changeWithin(history.scaleDowns, policy.periodSeconds, now);
    const proposed =
      direction === 'up'
        ? policy.type === 'Pods'
          ? periodStart + policy.value
          : Math.ceil((periodStart * (100 + policy.value)) / 100)
        : policy.type === 'Pods'
          ? periodStart - policy.value
          : Math.floor((periodStart * (100 - policy.value)) / 100);
    const wider = direction === 'up' ? biggest : !biggest;
    limit = limit === undefined ? proposed : wider ? Math.max(limit, proposed) : Math.min(limit, proposed);
  }
  return limit ?? current;
}

/** Drops what no window and no policy period looks back at any more. */
function prune(history: ScaleHistory, up: Rules, down: Rules, now: number): void {
  const keep = (events: ScaleEvent[], rules: Rules) => {
    const period = Math.max(0, ...rules.policies.map((policy) => policy.periodSeconds)) * 1000;
    return events.filter((event) => event.at > now - period);
  };
  const window = Math.max(up.windowMs, down.windowMs);
  history.recommendations = history.recommendations.filter((rec) => rec.at > now - window);
  history.scaleUps = keep(history.scaleUps, up);
  history.scaleDowns = keep(history.scaleDowns, down);
}

/**
 * The replica count to set, from the metrics' recommendation. Records the recommendation in `history`.
 * Without `behavior`, upstream's older rules: scale-down stabilization only, and a scale-up of at most
 * max(2 × current, 4).
 */
export function normalizeReplicas(input: NormalizeInput, history: ScaleHistory): Normalized {
  return input.behavior ? withBehavior(input, input.behavior, history) : withoutBehavior(input, history);
}

function withoutBehavior(input: NormalizeInput, history: ScaleHistory): Normalized {
  const { currentReplicas, desiredReplicas, minReplicas, maxReplicas, now } = input;
  const cutoff = now - input.downscaleStabilizationMs;
  let stabilized = desiredReplicas;
  for (const rec of history.recommendations) if (rec.at > cutoff) stabilized = Math.max(stabilized, rec.replicas);
  history.recommendations = [...history.recommendations.filter((rec) => rec.at > cutoff), { replicas: desiredReplicas, at: now }];
  const ableToScale = stabilized === desiredReplicas ? VERDICT.readyForNewScale : VERDICT.scaleDownStabilized;

  const scaleUpLimit = Math.max(LEGACY_SCALE_UP_FACTOR * currentReplicas, LEGACY_SCALE_UP_MINIMUM);
  const [maxAllowed, overMax] = maxReplicas > scaleUpLimit ? [scaleUpLimit, VERDICT.scaleUpLimit] : [maxReplicas, VERDICT.tooManyReplicas];
  const [replicas, verdict] =
    stabilized < minReplicas
      ? [minReplicas, VERDICT.tooFewReplicas]
      : stabilized > maxAllowed
        ? [maxAllowed, overMax]
        : [stabilized, VERDICT.desiredWithinRange];
  return { replicas, ableToScale, scalingLimited: { ...{}, ...verdict, limited: replicas !== stabilized } };
}

function withBehavior(input: NormalizeInput, behavior: HorizontalPodAutoscalerBehavior, history: ScaleHistory): Normalized {
  const { currentReplicas, desiredReplicas, minReplicas, maxReplicas, now } = input;
  const up = rulesOf(behavior.scaleUp, DEFAULT_SCALE_UP, 0);
  const down = rulesOf(behavior.scaleDown, DEFAULT_SCALE_DOWN, input.downscaleStabilizationMs);

  // Scale up only as far as every recommendation in the up window asked; down only as far as every one in the down window.
  let upTo = desiredReplicas;
  let downTo = desiredReplicas;
  for (const rec of history.recommendations) {
    if (rec.at > now - up.windowMs) upTo = Math.min(upTo, rec.replicas);
    if (rec.at > now - down.windowMs) downTo = Math.max(downTo, rec.replicas);
  }
  const stabilized = Math.min(Math.max(currentReplicas, upTo), downTo);
  history.recommendations.push({ replicas: desiredReplicas, at: now });
  prune(history, up, down, now);
  const ableToScale =
    stabilized === desiredReplicas ? VERDICT.readyForNewScale : stabilized < desiredReplicas ? VERDICT.scaleUpStabilized : VERDICT.scaleDownStabilized;

  let replicas = stabilized;
  let verdict: Verdict = VERDICT.desiredWithinRange;
  if (stabilized > currentReplicas) {
    const limit = Math.max(currentReplicas, policyLimit('up', currentReplicas, up, history, now));
    const [maxAllowed, overMax] = maxReplicas > limit ? [limit, VERDICT.scaleUpLimit] : [maxReplicas, VERDICT.tooManyReplicas];
    if (stabilized > maxAllowed) [replicas, verdict] = [maxAllowed, overMax];
  } else if (stabilized < currentReplicas) {
    const limit = Math.min(currentReplicas, policyLimit('down', currentReplicas, down, history, now));
    const [minAllowed, underMin] = minReplicas < limit ? [limit, VERDICT.scaleDownLimit] : [minReplicas, VERDICT.tooFewReplicas];
    if (stabilized < minAllowed) [replicas, verdict] = [minAllowed, underMin];
  }
  return { replicas, ableToScale, scalingLimited: { ...{}, ...verdict, limited: replicas !== stabilized } };
}

/** Remembers a rescale for the policies' periods (upstream keeps them only for autoscalers with a behavior). */
export function recordRescale(history: ScaleHistory, from: number, to: number, now: number): void {
  if (to > from) history.scaleUps.push({ change: to - from, at: now });
  else if (to < from) history.scaleDowns.push({ change: from - to, at: now });
}
