import { describe, expect, it } from 'vitest';
import { IdleMemory } from './idle-memory.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('IdleMemory', () => {
  it('collects twice once the thread turns idle after a busy second, and never while it only idles', async () => {
    const pauses: number[] = [];
    const idle = new IdleMemory((pauseMs) => pauses.push(pauseMs));
    try {
      await sleep(2_500);
      expect(idle.stats.collections).toBe(0);
      // A busy stretch longer than a tick, with garbage to collect.
      const until = performance.now() + 1_300;
      let garbage: unknown[] = [];
      while (performance.now() < until) garbage = [...garbage.slice(-1000), { at: performance.now(), text: 'x'.repeat(64) }];
      expect(garbage.length).toBeGreaterThan(0);
      const deadline = performance.now() + 8_000;
      while (idle.stats.collections < 2 && performance.now() < deadline) await sleep(100);
      expect(idle.stats.collections).toBe(2);
      expect(pauses).toHaveLength(2);
      for (const pause of pauses) expect(pause).toBeGreaterThan(0);
      // Idle again: no further collection.
      await sleep(2_500);
      expect(idle.stats.collections).toBe(2);
    } finally {
      idle.stop();
    }
  }, 20_000);
});
