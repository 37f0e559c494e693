import type { HorizontalPodAutoscalerBehavior, HPAScalingPolicy } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { emptyHistory, normalizeReplicas, recordRescale, type NormalizeInput, type ScaleHistory } from './normalize.js';

const NOW = 1_000_000_000;
const S = 1000;
const pods = (value: number, periodSeconds = 60): HPAScalingPolicy => ({ type: 'Pods', value, periodSeconds });
const percent = (value: number, periodSeconds = 60): HPAScalingPolicy => ({ type: 'Percent', value, periodSeconds });

interface Row {
  name: string;
  input: Partial<NormalizeInput> & Pick<NormalizeInput, 'currentReplicas' | 'desiredReplicas'>;
  history?: Partial<ScaleHistory>;
  want: number;
  able: string;
  limited: string;
  isLimited: boolean;
}

function run(row: Row) {
  const history = { ...emptyHistory(), ...row.history };
  const result = normalizeReplicas({ minReplicas: 1, maxReplicas: 100, downscaleStabilizationMs: 300 * S, now: NOW, ...row.input }, history);
  return { result, history };
}

const noWindows = (rules: HorizontalPodAutoscalerBehavior = {}): HorizontalPodAutoscalerBehavior => ({
  scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [pods(100)], ...rules.scaleUp },
  scaleDown: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [percent(100)], ...rules.scaleDown },
});

const withoutBehavior: Row[] = [
  {
    name: 'scale-down waits for the highest recommendation in the window',
    input: { currentReplicas: 5, desiredReplicas: 2 },
    history: { recommendations: [{ replicas: 5, at: NOW - 60 * S }] },
    want: 5,
    able: 'ScaleDownStabilized',
    limited: 'DesiredWithinRange',
    isLimited: false,
  },
  {
    name: 'recommendations older than the window no longer hold it back',
    input: { currentReplicas: 5, desiredReplicas: 2 },
    history: { recommendations: [{ replicas: 5, at: NOW - 301 * S }] },
    want: 2,
    able: 'ReadyForNewScale',
    limited: 'DesiredWithinRange',
    isLimited: false,
  },
  {
    name: 'scale-up goes to at most twice the current count',
    input: { currentReplicas: 3, desiredReplicas: 20, maxReplicas: 30 },
    want: 6,
    able: 'ReadyForNewScale',
    limited: 'ScaleUpLimit',
    isLimited: true,
  },
  {
    name: 'or to 4 from a small count',
    input: { currentReplicas: 1, desiredReplicas: 9 },
    want: 4,
    able: 'ReadyForNewScale',
    limited: 'ScaleUpLimit',
    isLimited: true,
  },
  {
    name: 'maxReplicas caps it',
    input: { currentReplicas: 30, desiredReplicas: 40, maxReplicas: 35 },
    want: 35,
    able: 'ReadyForNewScale',
    limited: 'TooManyReplicas',
    isLimited: true,
  },
  {
    name: 'minReplicas floors it',
    input: { currentReplicas: 3, desiredReplicas: 1, minReplicas: 2, downscaleStabilizationMs: 0 },
    want: 2,
    able: 'ReadyForNewScale',
    limited: 'TooFewReplicas',
    isLimited: true,
  },
];

const withBehavior: Row[] = [
  {
    name: 'scale-up waits for the lowest recommendation in its window',
    input: { currentReplicas: 2, desiredReplicas: 6, behavior: noWindows({ scaleUp: { stabilizationWindowSeconds: 60 } }) },
    history: { recommendations: [{ replicas: 3, at: NOW - 30 * S }] },
    want: 3,
    able: 'ScaleUpStabilized',
    limited: 'DesiredWithinRange',
    isLimited: false,
  },
  {
    name: 'scale-down waits for the highest recommendation in its window',
    input: { currentReplicas: 8, desiredReplicas: 2, behavior: noWindows({ scaleDown: { stabilizationWindowSeconds: 120 } }) },
    history: { recommendations: [{ replicas: 6, at: NOW - 100 * S }] },
    want: 6,
    able: 'ScaleDownStabilized',
    limited: 'DesiredWithinRange',
    isLimited: false,
  },
  {
    name: "a behavior without a scale-down window takes the controller's",
    input: { currentReplicas: 8, desiredReplicas: 4, behavior: { scaleUp: { policies: [pods(4)] } } },
    history: { recommendations: [{ replicas: 8, at: NOW - 200 * S }] },
    want: 8,
    able: 'ScaleDownStabilized',
    limited: 'DesiredWithinRange',
    isLimited: false,
  },
  {
    name: 'a Percent policy limits a scale-down',
    input: { currentReplicas: 10, desiredReplicas: 2, behavior: noWindows({ scaleDown: { policies: [percent(50)] } }) },
    want: 5,
    able: 'ReadyForNewScale',
    limited: 'ScaleDownLimit',
    isLimited: true,
  },
  {
    name: 'policies count the rescales already made in their period',
    input: { currentReplicas: 7, desiredReplicas: 2, behavior: noWindows({ scaleDown: { policies: [pods(4)] } }) },
    history: { scaleDowns: [{ change: 3, at: NOW - 30 * S }] },
    // The period started at 10: at most 4 fewer → 6.
    want: 6,
    able: 'ReadyForNewScale',
    limited: 'ScaleDownLimit',
    isLimited: true,
  },
  {
    name: 'rescales older than the period do not count',
    input: { currentReplicas: 7, desiredReplicas: 2, behavior: noWindows({ scaleDown: { policies: [pods(4)] } }) },
    history: { scaleDowns: [{ change: 3, at: NOW - 61 * S }] },
    want: 3,
    able: 'ReadyForNewScale',
    limited: 'ScaleDownLimit',
    isLimited: true,
  },
  {
    name: 'selectPolicy Max takes the policy allowing the biggest scale-up',
    input: { currentReplicas: 10, desiredReplicas: 50, behavior: noWindows({ scaleUp: { selectPolicy: 'Max', policies: [pods(4), percent(100)] } }) },
    want: 20,
    able: 'ReadyForNewScale',
    limited: 'ScaleUpLimit',
    isLimited: true,
  },
  {
    name: 'selectPolicy Min takes the policy allowing the smallest scale-up',
    input: { currentReplicas: 10, desiredReplicas: 50, behavior: noWindows({ scaleUp: { selectPolicy: 'Min', policies: [pods(4), percent(100)] } }) },
    want: 14,
    able: 'ReadyForNewScale',
    limited: 'ScaleUpLimit',
    isLimited: true,
  },
  {
    name: 'selectPolicy Min takes the policy allowing the smallest scale-down',
    input: { currentReplicas: 10, desiredReplicas: 1, behavior: noWindows({ scaleDown: { selectPolicy: 'Min', policies: [pods(2), percent(50)] } }) },
    want: 8,
    able: 'ReadyForNewScale',
    limited: 'ScaleDownLimit',
    isLimited: true,
  },
  {
    name: 'selectPolicy Disabled stops scaling that way',
    input: { currentReplicas: 5, desiredReplicas: 2, behavior: noWindows({ scaleDown: { selectPolicy: 'Disabled' } }) },
    want: 5,
    able: 'ReadyForNewScale',
    limited: 'ScaleDownLimit',
    isLimited: true,
  },
  {
    name: 'maxReplicas below the rate limit caps a scale-up',
    input: { currentReplicas: 10, desiredReplicas: 50, maxReplicas: 12, behavior: noWindows({ scaleUp: { policies: [pods(4)] } }) },
    want: 12,
    able: 'ReadyForNewScale',
    limited: 'TooManyReplicas',
    isLimited: true,
  },
  {
    name: 'minReplicas above the rate limit floors a scale-down',
    input: { currentReplicas: 5, desiredReplicas: 1, minReplicas: 3, behavior: noWindows() },
    want: 3,
    able: 'ReadyForNewScale',
    limited: 'TooFewReplicas',
    isLimited: true,
  },
  {
    name: 'a change within every limit goes through',
    input: { currentReplicas: 4, desiredReplicas: 6, behavior: noWindows() },
    want: 6,
    able: 'ReadyForNewScale',
    limited: 'DesiredWithinRange',
    isLimited: false,
  },
];

describe('normalizeReplicas without a behavior (upstream’s older rules)', () => {
  it.each(withoutBehavior)('$name', (row) => {
    const { result } = run(row);
    expect(result.replicas).toBe(row.want);
    expect(result.ableToScale.reason).toBe(row.able);
    expect(result.scalingLimited).toMatchObject({ reason: row.limited, limited: row.isLimited });
  });
});

describe('normalizeReplicas with a behavior', () => {
  it.each(withBehavior)('$name', (row) => {
    const { result } = run(row);
    expect(result.replicas).toBe(row.want);
    expect(result.ableToScale.reason).toBe(row.able);
    expect(result.scalingLimited).toMatchObject({ reason: row.limited, limited: row.isLimited });
  });

  it('records each recommendation and forgets those no window looks at', () => {
    const { history } = run({
      name: '',
      input: { currentReplicas: 4, desiredReplicas: 4, behavior: noWindows({ scaleDown: { stabilizationWindowSeconds: 60 } }) },
      history: {
        recommendations: [
          { replicas: 9, at: NOW - 61 * S },
          { replicas: 5, at: NOW - 10 * S },
        ],
      },
      want: 0,
      able: '',
      limited: '',
      isLimited: false,
    });
    expect(history.recommendations).toEqual([
      { replicas: 5, at: NOW - 10 * S },
      { replicas: 4, at: NOW },
    ]);
  });
});

describe('recordRescale', () => {
  it('keeps scale-ups and scale-downs apart, as positive changes', () => {
    const history = emptyHistory();
    recordRescale(history, 2, 5, NOW);
    recordRescale(history, 5, 3, NOW + S);
    recordRescale(history, 3, 3, NOW + 2 * S);
    expect(history.scaleUps).toEqual([{ change: 3, at: NOW }]);
    expect(history.scaleDowns).toEqual([{ change: 2, at: NOW + S }]);
  });
});
