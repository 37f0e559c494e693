import { describe, expect, it } from 'vitest';
import { Kernel } from '@skiff/kernel';
import { StartProgress, watchStart } from './progress.js';

/** A clock the test moves: each lifecycle tap below advances it by what it "takes". */
function fakeClock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

/** A kernel whose start has a store, an unnamed quick step, an unnamed slow step and a kubelet that logs two nodes. */
function kernelWithSteps(clock: ReturnType<typeof fakeClock>, onRecord: (message: string, fields: Record<string, unknown>) => void) {
  const kernel = new Kernel({ config: { nodes: 2 } });
  kernel.lifecycle('@skiff/store', -300, { start: () => clock.advance(40) });
  kernel.lifecycle('quick-plugin', -250, { start: () => clock.advance(5) });
  kernel.lifecycle('slow-plugin', -100, { start: () => clock.advance(1500) });
  kernel.lifecycle('@skiff/kubelet', 200, {
    start: () => {
      for (const node of ['node-1', 'node-2']) {
        clock.advance(300);
        onRecord('kubelet started', { component: 'kubelet', node, runtime: 'simulated', network: 'ipam' });
      }
      clock.advance(10);
    },
  });
  return kernel;
}

async function run(terminal: boolean) {
  const clock = fakeClock();
  const lines: string[] = [];
  const drawn: string[] = [];
  const progress = new StartProgress(
    { out: (line) => lines.push(line), terminal: terminal ? { write: (text) => drawn.push(text) } : undefined },
    { now: clock.now, frameMs: 60_000 },
  );
  const records: { onRecord?: ReturnType<typeof watchStart>['onRecord'] } = {};
  const kernel = kernelWithSteps(clock, (message, fields) => records.onRecord?.({ level: 'info', message, fields }));
  const watch = watchStart(kernel, progress, () => undefined);
  records.onRecord = watch.onRecord;
  await kernel.start();
  watch.stop();
  await kernel.stop();
  return { lines, drawn };
}

describe('the progress of skiff up', () => {
  it('prints the named steps, slow other steps and each node as plain lines with their durations when not on a terminal', async () => {
    const { lines, drawn } = await run(false);
    expect(lines).toEqual([
      'skiff: store opened (0.04s)',
      'skiff: slow-plugin started (1.50s)',
      'skiff: node-1: kubelet started (runtime simulated, network ipam) (0.30s)',
      'skiff: node-2: kubelet started (runtime simulated, network ipam) (0.30s)',
      'skiff: 2 nodes started (0.61s)',
    ]);
    expect(drawn).toEqual([]);
  });

  it('prints the same lines on a terminal, with a spinner line saying what runs that it clears at the end', async () => {
    const { lines, drawn } = await run(true);
    expect(lines).toEqual((await run(false)).lines);
    const clear = '\r\x1b[2K';
    expect(drawn.every((text) => text.startsWith(clear))).toBe(true);
    const spinner = drawn.map((text) => text.slice(clear.length)).filter(Boolean);
    expect(spinner[0]).toBe('⠋ opening the store… 0.00s');
    expect(spinner.some((text) => /^. starting slow-plugin… 0\.00s$/.test(text))).toBe(true);
    expect(spinner.some((text) => /^. starting the nodes… 0\.30s$/.test(text))).toBe(true);
    expect(drawn.at(-1)).toBe(clear);
  });

  it('names the number of controllers the controllers hook registered', async () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const kernel = new Kernel();
    kernel.hooks.controllers.tap('some-controllers', (registry) => {
      registry.register({ name: 'a', start: () => undefined });
      registry.register({ name: 'b', start: () => undefined });
    });
    kernel.lifecycle('@skiff/controller-manager', 0, {
      start: () => {
        const names: string[] = [];
        kernel.hooks.controllers.call({ register: (c) => void names.push(c.name), list: () => names.map((name) => ({ name, start: () => undefined })) });
        clock.advance(20);
      },
    });
    const watch = watchStart(kernel, new StartProgress({ out: (line) => lines.push(line) }, { now: clock.now }), () => undefined);
    await kernel.start();
    watch.stop();
    expect(lines).toEqual(['skiff: 2 controllers started (0.02s)']);
  });
});
