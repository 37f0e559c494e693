import { describe, expect, it } from 'vitest';
import { waitFor } from './wait.js';

describe('waitFor', () => {
  it('resolves with the first truthy value, sync or async', async () => {
    let calls = 0;
    expect(await waitFor('the third call', () => ++calls >= 3 && `call ${calls}`, { intervalMs: 1 })).toBe('call 3');
    const found = await waitFor('an object', async () => ({ name: 'p' }));
    expect(found).toEqual({ name: 'p' });
  });

  it('keeps polling past undefined, null, false, 0 and the empty string', async () => {
    const answers: unknown[] = [undefined, null, false, 0, '', 'done'];
    expect(await waitFor('done', () => answers.shift() as string | undefined, { intervalMs: 1 })).toBe('done');
    expect(answers).toEqual([]);
  });

  it('retries errors thrown by the check', async () => {
    let calls = 0;
    const value = await waitFor(
      'a flaky check',
      async () => {
        if (++calls < 3) throw new Error('not yet');
        return calls;
      },
      { intervalMs: 1 },
    );
    expect(value).toBe(3);
  });

  it('fails after the timeout naming what it waited for', async () => {
    await expect(waitFor('the pod to run', () => false, { timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(
      /^timed out after 30 ms waiting for the pod to run$/,
    );
  });

  it('reports the last error the check threw, keeping it as the cause', async () => {
    let calls = 0;
    const failure = await waitFor(
      'the node',
      () => {
        throw new Error(`nodes "node-1" not found (attempt ${++calls})`);
      },
      { timeoutMs: 30, intervalMs: 5 },
    ).catch((err: Error) => err);
    expect(failure.message).toBe(`timed out after 30 ms waiting for the node: nodes "node-1" not found (attempt ${calls})`);
    expect((failure.cause as Error).message).toBe(`nodes "node-1" not found (attempt ${calls})`);
  });
});
