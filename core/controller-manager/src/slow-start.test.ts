import { describe, expect, it } from 'vitest';
import { slowStartBatch } from './slow-start.js';

describe('slowStartBatch', () => {
  it('runs batches of 1, 2, 4, … in parallel until the count is reached', async () => {
    let running = 0;
    const batches: number[] = [];
    let calls = 0;
    const result = await slowStartBatch(10, 1, async () => {
      calls += 1;
      running += 1;
      if (batches.length === 0 || running > batches.at(-1)!) batches.push(running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
    });
    expect(result).toEqual({ successes: 10 });
    expect(calls).toBe(10);
    expect(Math.max(...batches)).toBe(4);
  });

  it('stops after the first batch with a failure and reports it', async () => {
    let calls = 0;
    const failure = new Error('quota exceeded');
    const result = await slowStartBatch(10, 1, async () => {
      calls += 1;
      if (calls >= 3) throw failure;
    });
    // Batch 1 (1 call) and batch 2 (2 calls: the second fails); batches 3+ never start.
    expect(calls).toBe(3);
    expect(result).toEqual({ successes: 2, error: failure });
  });

  it('does nothing for a count of zero', async () => {
    expect(await slowStartBatch(0, 1, async () => {})).toEqual({ successes: 0 });
  });
});
