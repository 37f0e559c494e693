import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Event, type Pod } from '@skiff/api';
import { definePlugin, recordingLogger, type ApiClient, type LogRecord, type SchedulerPlugin } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import schedulerPlugin, { buildProfile, PluginRegistry, Scheduler } from './index.js';
import type { ExtensionPoint } from './framework/extension-points.js';
import { makeNode, makePod } from './test-support/objects.js';

/** Every line logged, with the bindings of the child logger it went through. */
const lines: LogRecord[] = [];

/** Extension points that throw for pods labelled fail=<point>, until healed. */
const failing = new Set<string>();
const failsAt = (point: ExtensionPoint, pod: Pod) => pod.metadata.labels?.fail === point && failing.has(point);
const boom = (point: ExtensionPoint, pod: Pod) => {
  if (failsAt(point, pod)) throw new Error(`boom in ${point}`);
};

const flaky: SchedulerPlugin = {
  name: 'Flaky',
  preFilter: (_s, pod) => (boom('PreFilter', pod), null),
  filter: (_s, pod) => {
    boom('Filter', pod);
    // A misfit everywhere, so that PostFilter runs.
    return failsAt('PostFilter', pod) ? { code: 'Unschedulable', reasons: ['node(s) were flaky'] } : null;
  },
  postFilter: (_s, pod) => (boom('PostFilter', pod), null),
  preScore: (_s, pod) => (boom('PreScore', pod), null),
  score: (_s, pod) => (boom('Score', pod), 50),
  normalizeScore: (_s, pod) => boom('NormalizeScore', pod),
  reserve: async (_s, pod) => (boom('Reserve', pod), null),
  permit: async (_s, pod) => (boom('Permit', pod), null),
  preBind: async (_s, pod) => (boom('PreBind', pod), null),
  bind: async (_s, pod) => (boom('Bind', pod), undefined),
  postBind: async (_s, pod) => boom('PostBind', pod),
};

const flakyPlugin = definePlugin({
  name: 'skiff-plugin-flaky',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap('skiff-plugin-flaky', (registry) => registry.register(flaky));
  },
});

let controlPlane: ControlPlane;
let client: ApiClient;
beforeAll(async () => {
  controlPlane = await startControlPlane([schedulerPlugin, flakyPlugin], { logger: recordingLogger(lines) });
  client = controlPlane.client;
  // Two nodes, so that scoring runs.
  await client.create(RESOURCES.nodes, makeNode('node-a'));
  await client.create(RESOURCES.nodes, makeNode('node-b'));
});
afterAll(() => controlPlane?.stop());

/** Failed pods are retried only once their backoff has passed. */
const RETRY_WAIT = { timeoutMs: 15_000 };

const podName = (point: string) => `fails-in-${point.toLowerCase()}`;
const getPod = (name: string) => client.get<Pod>(RESOURCES.pods, name, 'default');
const createPod = (point: string) =>
  client.create(
    RESOURCES.pods,
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: podName(point), namespace: 'default', labels: { fail: point } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    },
    'default',
  );
const eventsAbout = async (name: string) => (await client.list<Event>(RESOURCES.events, 'default')).items.filter((event) => event.involvedObject.name === name);

const MESSAGES: [ExtensionPoint, string][] = [
  ['PreFilter', 'running PreFilter plugin "Flaky": boom in PreFilter'],
  ['Filter', 'running "Flaky" filter plugin: boom in Filter'],
  ['PostFilter', 'running PostFilter plugin "Flaky": boom in PostFilter'],
  ['PreScore', 'running PreScore plugin "Flaky": boom in PreScore'],
  ['Score', 'running Score plugins: plugin "Flaky" failed with: boom in Score'],
  ['NormalizeScore', 'running Normalize on Score plugins: plugin "Flaky" failed with: boom in NormalizeScore'],
  ['Reserve', 'running Reserve plugin "Flaky": boom in Reserve'],
  ['Permit', 'running Permit plugin "Flaky": boom in Permit'],
  ['PreBind', 'running PreBind plugin "Flaky": boom in PreBind'],
  ['Bind', 'running Bind plugin "Flaky": boom in Bind'],
];

describe('a scheduler plugin that throws', () => {
  it('leaves the pod PodScheduled=False / SchedulerError with a FailedScheduling event naming the plugin and the extension point, then retries it with backoff', async () => {
    for (const [point] of MESSAGES) failing.add(point);
    for (const [point] of MESSAGES) await createPod(point);

    for (const [point, message] of MESSAGES) {
      const name = podName(point);
      const condition = await waitFor(
        `${name} to fail`,
        async () => (await getPod(name)).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.reason === 'SchedulerError'),
        RETRY_WAIT,
      );
      expect(condition).toMatchObject({ type: 'PodScheduled', status: 'False', reason: 'SchedulerError', message });
      const event = await waitFor(
        `the FailedScheduling event of ${name}`,
        async () => (await eventsAbout(name)).find((e) => e.reason === 'FailedScheduling'),
        RETRY_WAIT,
      );
      expect(event).toMatchObject({ type: 'Warning', reason: 'FailedScheduling', message, source: { component: 'default-scheduler' } });
      const logged = lines.find((line) => line.message === 'Error scheduling pod; retrying' && line.fields.pod === `default/${name}`);
      expect(logged?.level).toBe('error');
      expect(logged?.fields).toMatchObject({ component: 'scheduler', message, schedulerPlugin: 'Flaky', plugin: 'skiff-plugin-flaky', extensionPoint: point });
      expect((logged?.fields.err as Error).message).toBe(`boom in ${point}`);
    }

    // Nothing in the cluster changes: the pods are retried after their backoff alone.
    failing.clear();
    for (const [point] of MESSAGES) {
      expect(await waitFor(`${podName(point)} to be bound`, async () => (await getPod(podName(point))).spec.nodeName, RETRY_WAIT)).toMatch(/^node-[ab]$/);
    }
  });

  it('in PostBind: the pod stays bound and the failure is logged naming the plugin', async () => {
    failing.add('PostBind');
    await createPod('PostBind');
    expect(await waitFor('the pod to be bound', async () => (await getPod(podName('PostBind'))).spec.nodeName, RETRY_WAIT)).toMatch(/^node-[ab]$/);
    const logged = await waitFor('the PostBind failure in the log', async () => lines.find((line) => line.fields.extensionPoint === 'PostBind'), RETRY_WAIT);
    expect(logged).toMatchObject({
      level: 'warn',
      message: 'running PostBind plugin "Flaky": boom in PostBind',
      fields: { pod: 'default/fails-in-postbind', schedulerPlugin: 'Flaky', plugin: 'skiff-plugin-flaky' },
    });
  });
});

describe('a queueSort plugin that throws', () => {
  it('counts as "equal" so the queue keeps arrival order, and is logged once naming the plugin', async () => {
    const registry = new PluginRegistry();
    registry.register({
      name: 'BrokenSort',
      queueSort: () => {
        throw new Error('no priority class');
      },
    });
    lines.length = 0;
    const scheduler = new Scheduler({
      profile: buildProfile(registry),
      logger: recordingLogger(lines),
      client: {} as never,
      informers: {} as never,
      recorder: {} as never,
    });
    for (const name of ['first', 'second', 'third']) scheduler.queue.add(`default/${name}`, makePod(name));
    const order: string[] = [];
    for (let i = 0; i < 3; i++) order.push((await scheduler.queue.pop())!.info.key);
    scheduler.queue.close();
    expect(order).toEqual(['default/first', 'default/second', 'default/third']);
    expect(lines.filter((line) => line.fields.extensionPoint === 'QueueSort')).toMatchObject([
      {
        level: 'error',
        message: 'running QueueSort plugin "BrokenSort": no priority class',
        fields: { schedulerPlugin: 'BrokenSort', plugin: '@skiff/scheduler' },
      },
    ]);
  });
});
