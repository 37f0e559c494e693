import { describe, expect, it } from 'vitest';
import { CrashLoopBackOff } from './crash-loop-backoff.js';
import { formatDuration, podDescription } from './events.js';

describe('crash-loop back-off', () => {
  it('restarts at once the first time, then waits 10 s doubling to 300 s', () => {
    let now = 0;
    const backOff = new CrashLoopBackOff({ initialMs: 10_000, maxMs: 300_000, now: () => now });
    const waits: number[] = [];
    for (let restart = 0; restart < 8; restart++) {
      const finishedAt = now;
      waits.push(backOff.remaining('uid/app', finishedAt));
      now += waits.at(-1)!;
      expect(backOff.remaining('uid/app', finishedAt)).toBe(0);
      backOff.next('uid/app', finishedAt);
      now += 1000;
    }
    expect(waits).toEqual([0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
    expect(backOff.current('uid/app')).toBe(300_000);
  });

  it('counts the time since the exit, and starts over after a run longer than twice the maximum', () => {
    let now = 0;
    const backOff = new CrashLoopBackOff({ initialMs: 10_000, maxMs: 300_000, now: () => now });
    backOff.next('uid/app', 0);
    backOff.next('uid/app', 0);
    expect(backOff.current('uid/app')).toBe(20_000);
    now = 15_000;
    expect(backOff.remaining('uid/app', 10_000)).toBe(15_000);
    now = 11 * 60_000;
    expect(backOff.remaining('uid/app', now)).toBe(0);
    backOff.next('uid/app', now);
    expect(backOff.current('uid/app')).toBe(10_000);
    backOff.forget('uid/');
    expect(backOff.remaining('uid/app', now)).toBe(0);
  });

  it("prints durations as Go does, and pods as Kubernetes' messages name them", () => {
    expect([100, 1000, 10_000, 80_000, 300_000, 3_600_000, 1500].map(formatDuration)).toEqual(['100ms', '1s', '10s', '1m20s', '5m0s', '1h0m0s', '1.5s']);
    expect(podDescription({ name: 'web', namespace: 'shop', uid: 'u-1' })).toBe('web_shop(u-1)');
  });
});
