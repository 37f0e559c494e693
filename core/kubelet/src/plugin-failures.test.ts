import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Event, type Pod } from '@skiff/api';
import {
  definePlugin,
  Kernel,
  recordingLogger,
  type ApiClient,
  type ContainerConfig,
  type LogRecord,
  type NodeContext,
  type PodNetwork,
  type PodSandboxConfig,
} from '@skiff/kernel';
import networkIpam from '@skiff/plugin-network-ipam';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import kubelet from './index.js';
import { namingFailures } from './plugin-failures.js';
import { simulatedRuntime, withMethods } from './test-support/node-parts.js';

const MOUNTS_BUG = "Cannot read properties of undefined (reading 'mounts')";

/** A third-party runtime with a bug: creating a container named "crash" throws. */
async function buggy(node: NodeContext) {
  const runtime = await simulatedRuntime(node.dataDir, {}, node.logger);
  return withMethods(runtime, {
    async createContainer(sandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
      if (config.metadata.name === 'crash') throw new TypeError(MOUNTS_BUG);
      return runtime.createContainer(sandboxId, config, sandboxConfig);
    },
  });
}

const buggyRuntime = definePlugin({
  name: 'skiff-plugin-buggy-runtime',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.runtimes.tap('skiff-plugin-buggy-runtime', (registry) => registry.register({ name: 'buggy', create: buggy }));
  },
});

const brokenRuntime = definePlugin({
  name: 'skiff-plugin-broken-runtime',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.runtimes.tap('skiff-plugin-broken-runtime', (registry) =>
      registry.register({
        name: 'broken',
        create: () => {
          throw new Error('no socket at /run/containerd/containerd.sock');
        },
      }),
    );
  },
});

describe('a runtime plugin that fails', () => {
  const lines: LogRecord[] = [];
  let controlPlane: ControlPlane;
  let client: ApiClient;
  beforeAll(async () => {
    controlPlane = await startControlPlane([scheduler, resourcesFit, [kubelet, { heartbeatSeconds: 1, runtime: 'buggy' }], buggyRuntime, networkIpam], {
      config: { nodes: 1 },
      logger: recordingLogger(lines),
    });
    client = controlPlane.client;
  });
  afterAll(() => controlPlane?.stop());

  it("names the runtime and its plugin in the container's state, the event and the log", async () => {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'crashing', namespace: 'default' },
      spec: { containers: [{ name: 'crash', image: 'nginx:1.27' }] },
    };
    await client.create(RESOURCES.pods, pod, 'default');
    const message = `container runtime "buggy" (plugin "skiff-plugin-buggy-runtime") failed in createContainer: ${MOUNTS_BUG}`;
    const waiting = await waitFor(
      'the container to be waiting',
      async () => (await client.get<Pod>(RESOURCES.pods, 'crashing', 'default')).status?.containerStatuses?.[0]?.state?.waiting,
    );
    expect(waiting).toEqual({ reason: 'CreateContainerError', message });
    const events = await waitFor('the Failed event', async () =>
      (await client.list<Event>(RESOURCES.events, 'default')).items.find((e) => e.involvedObject.name === 'crashing' && e.reason === 'Failed'),
    );
    expect(events).toMatchObject({ type: 'Warning', reason: 'Failed', message: `Error: ${message}`, source: { component: 'kubelet' } });
    const logged = lines.find((line) => line.message === message);
    expect(logged).toMatchObject({
      level: 'error',
      fields: { component: 'kubelet', node: 'node-1', runtime: 'buggy', plugin: 'skiff-plugin-buggy-runtime', method: 'createContainer' },
    });
    expect((logged!.fields.err as Error).message).toBe(MOUNTS_BUG);
  });
});

describe('a runtime that cannot even be created', () => {
  it('fails the start naming the runtime and its plugin', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'skiff-kubelet-broken-'));
    try {
      const kernel = new Kernel({ config: { dataDir, rootDir: dataDir, nodes: 1, logLevel: 'silent' } })
        .use(kubelet, { runtime: 'broken' })
        .use(brokenRuntime)
        .use(networkIpam);
      kernel.provide('apiHandler', { handle: async () => ({ status: 503 }) });
      await expect(kernel.start()).rejects.toThrow(
        'component "@skiff/kubelet" failed to start: container runtime "broken" (plugin "skiff-plugin-broken-runtime") failed in create: no socket at /run/containerd/containerd.sock',
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('namingFailures', () => {
  const network = (add: PodNetwork['add']): PodNetwork => ({ name: 'flaky-net', add, del: async () => undefined });
  const attachment = { containerId: 'c1', netnsPath: '', ifName: 'eth0', podName: 'p', podNamespace: 'default', podUid: 'u' };

  it('names the network and its plugin in an unexpected failure, and logs it', async () => {
    const lines: LogRecord[] = [];
    const named = namingFailures(
      network(async () => {
        throw new RangeError('Invalid array length');
      }),
      { kind: 'pod network', name: 'flaky-net', plugin: 'skiff-plugin-flaky-net' },
      recordingLogger(lines),
    );
    expect(named.name).toBe('flaky-net');
    await expect(named.add(attachment)).rejects.toThrow('pod network "flaky-net" (plugin "skiff-plugin-flaky-net") failed in add: Invalid array length');
    expect(lines).toMatchObject([{ level: 'error', fields: { network: 'flaky-net', plugin: 'skiff-plugin-flaky-net', method: 'add' } }]);
  });

  it('lets deliberate answers through unchanged: CRI statuses and coded errors', async () => {
    const lines: LogRecord[] = [];
    const exhausted = Object.assign(new Error('no IP addresses available in range set: 10.244.1.1-10.244.1.254'), { code: 'SKIFF_ERR_IPAM_EXHAUSTED' });
    const notFound = new Error('rpc error: code = NotFound desc = sandbox "x" not found');
    const identity = { kind: 'pod network' as const, name: 'flaky-net' };
    await expect(
      namingFailures(
        network(() => Promise.reject(exhausted)),
        identity,
        recordingLogger(lines),
      ).add(attachment),
    ).rejects.toBe(exhausted);
    await expect(
      namingFailures(
        network(() => Promise.reject(notFound)),
        identity,
        recordingLogger(lines),
      ).add(attachment),
    ).rejects.toBe(notFound);
    expect(lines).toEqual([]);
  });
});
