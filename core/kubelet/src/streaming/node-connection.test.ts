import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '@skiff/api';
import {
  Kernel,
  type ContainerLogOptions,
  type ContainerRuntime,
  type ContainerStatusInfo,
  type PodRef,
  type PodSandboxConfig,
  type StreamRequest,
} from '@skiff/kernel';
import { KubeletError } from '../errors.js';
import kubelet from '../index.js';
import { CRI_LABELS } from '../names.js';
import { simulatedRuntime, withMethods } from '../test-support/node-parts.js';
import { boundPod } from '../test-support/objects.js';
import { KubeletNodeConnection, type KubeletNodeConnectionOptions } from './node-connection.js';
import { NodeConnectionRegistry } from './node-connections.js';

/** The simulated runtime with a streaming server, as containerd has one. */
async function streamingRuntime(dataDir: string): Promise<ContainerRuntime> {
  return withMethods(await simulatedRuntime(dataDir, { runMs: 1000 }), {
    async exec(request: StreamRequest): Promise<string> {
      return `https://node/exec/${request.containerId}?cmd=${request.cmd?.join('+')}`;
    },
    async attach(request: StreamRequest): Promise<string> {
      return `https://node/attach/${request.containerId}`;
    },
    async portForward(sandboxId: string, ports: number[]): Promise<string> {
      return `https://node/portforward/${sandboxId}?ports=${ports.join(',')}`;
    },
  });
}

/** The simulated runtime as a runtime that keeps no log files is: its containers report no log path. */
async function runtimeWithoutLogFiles(dataDir: string): Promise<ContainerRuntime> {
  const runtime = await simulatedRuntime(dataDir);
  const unlogged = (status: ContainerStatusInfo): ContainerStatusInfo => ({ ...status, logPath: undefined });
  return withMethods(runtime, {
    listContainers: async (filter) => (await runtime.listContainers(filter)).map(unlogged),
    containerStatus: async (containerId) => {
      const status = await runtime.containerStatus(containerId);
      return status && unlogged(status);
    },
  });
}

let dir: string;
let runtime: ContainerRuntime;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-node-connection-'));
  runtime = await streamingRuntime(join(dir, 'runtime'));
  await runtime.pullImage('nginx:1.27');
});
afterEach(async () => {
  await runtime.close?.();
  await rm(dir, { recursive: true, force: true });
});

const ref: PodRef = { namespace: 'default', name: 'web-1', uid: 'uid-web-1' };
const FAST = { pollMs: 20, statusMs: 20 };

function connection(options: Partial<KubeletNodeConnectionOptions> = {}) {
  return new KubeletNodeConnection({ nodeName: 'node-1', runtime, timing: FAST, ...options });
}

/** Runs a sandbox for the pod as the kubelet would (its labels, a log folder). */
async function sandbox(pod: PodRef = ref, attempt = 0): Promise<{ id: string; config: PodSandboxConfig }> {
  const config: PodSandboxConfig = {
    metadata: { ...pod, attempt },
    logDirectory: join(dir, 'pods', `${pod.namespace}_${pod.name}_${pod.uid}`),
    labels: { [CRI_LABELS.POD_NAMESPACE]: pod.namespace, [CRI_LABELS.POD_NAME]: pod.name, [CRI_LABELS.POD_UID]: pod.uid },
  };
  return { id: await runtime.runPodSandbox(config), config };
}

async function container(box: { id: string; config: PodSandboxConfig }, attempt = 0, start = true, name = 'web'): Promise<string> {
  const id = await runtime.createContainer(
    box.id,
    {
      metadata: { name, attempt },
      image: { image: 'nginx:1.27' },
      labels: { ...box.config.labels, [CRI_LABELS.CONTAINER_NAME]: name },
      logPath: `${name}/${attempt}.log`,
    },
    box.config,
  );
  if (start) await runtime.startContainer(id);
  return id;
}

async function logs(conn: KubeletNodeConnection, options: ContainerLogOptions = {}, signal = new AbortController().signal): Promise<string> {
  let text = '';
  for await (const chunk of await conn.containerLogs(ref, 'web', options, signal)) text += Buffer.from(chunk).toString();
  return text;
}

async function failure(promise: Promise<unknown>): Promise<KubeletError> {
  const err = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(err).toBeInstanceOf(KubeletError);
  return err as KubeletError;
}

describe('the kubelet node connection: logs', () => {
  it("reads the newest container's log, and with previous the one a restart replaced", async () => {
    const box = await sandbox();
    const first = await container(box, 0);
    expect(await logs(connection())).toBe('simulated container web started (image nginx:1.27)\n');
    await runtime.stopContainer(first, 0);
    const second = await container(box, 1);
    const logPath = (await runtime.containerStatus(second))!.logPath!;
    expect(logPath).toBe(join(dir, 'pods', 'default_web-1_uid-web-1', 'web', '1.log'));
    await appendFile(logPath, '2026-03-01T10:00:00.5Z stderr F second run\n');
    const conn = connection();
    expect(await logs(conn, { timestamps: true })).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z simulated container web started \(image nginx:1.27\)\n2026-03-01T10:00:00.500000000Z second run\n$/,
    );
    expect(await logs(conn, { previous: true })).toBe('simulated container web started (image nginx:1.27)\n');
  });

  it("with previous, reads the instance the pod's status names as the last termination (a crash loop's newest)", async () => {
    const box = await sandbox();
    const first = await container(box, 0);
    await runtime.stopContainer(first, 0);
    const second = await container(box, 1);
    await runtime.stopContainer(second, 0);
    await appendFile((await runtime.containerStatus(second))!.logPath!, '2026-03-01T10:00:00.5Z stdout F second run\n');
    const pod = boundPod('web-1', {}, ref.uid);
    pod.status = {
      containerStatuses: [
        {
          name: 'web',
          image: 'nginx:1.27',
          imageID: '',
          ready: false,
          restartCount: 1,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 0, containerID: `simulated://${second}` } },
        },
      ],
    };
    const started = 'simulated container web started (image nginx:1.27)\n';
    expect(await logs(connection({ pod: () => pod }), { previous: true })).toBe(`${started}second run\n`);
    // Without the pod's status: the instance before the newest.
    expect(await logs(connection(), { previous: true })).toBe(started);
  });

  it('says when there is no previous container, as upstream does', async () => {
    await container(await sandbox());
    const err = await failure(connection().containerLogs(ref, 'web', { previous: true }, new AbortController().signal));
    expect(err.code).toBe('SKIFF_ERR_KUBELET_PREVIOUS_NOT_FOUND');
    expect(err.message).toBe('previous terminated container "web" in pod "web-1" not found');
    expect(err.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'previous terminated container "web" in pod "web-1" not found',
      reason: 'BadRequest',
      code: 400,
    });
  });

  it('says a container that has not started is waiting, with the reason from the pod status when it has one', async () => {
    const box = await sandbox();
    const waiting = await failure(connection().containerLogs(ref, 'web', {}, new AbortController().signal));
    expect(waiting.message).toBe('container "web" in pod "web-1" is waiting to start: ContainerCreating');
    await container(box, 0, false);
    const pod: Pod = boundPod('web-1');
    pod.status = {
      containerStatuses: [{ name: 'web', image: 'nginx:1.27', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff' } } }],
    };
    const pulling = await failure(connection({ pod: () => pod }).containerLogs(ref, 'web', {}, new AbortController().signal));
    expect(pulling.code).toBe('SKIFF_ERR_KUBELET_CONTAINER_WAITING');
    expect(pulling.message).toBe('container "web" in pod "web-1" is waiting to start: trying and failing to pull image');
  });

  it('does not know pods it does not run, nor an older pod of the same name', async () => {
    const missing = await failure(connection().containerLogs(ref, 'web', {}, new AbortController().signal));
    expect(missing.code).toBe('SKIFF_ERR_KUBELET_POD_NOT_FOUND');
    expect(missing.message).toBe('pod "default/web-1" (uid uid-web-1) is not on node "node-1"');
    expect(missing.toStatus()).toMatchObject({ reason: 'NotFound', code: 404 });
    await container(await sandbox({ ...ref, uid: 'uid-old' }));
    expect((await failure(connection().containerLogs(ref, 'web', {}, new AbortController().signal))).code).toBe('SKIFF_ERR_KUBELET_POD_NOT_FOUND');
  });

  it('says so when the runtime keeps no log file', async () => {
    await runtime.close?.();
    runtime = await runtimeWithoutLogFiles(join(dir, 'no-logs'));
    await runtime.pullImage('nginx:1.27');
    await container(await sandbox());
    const err = await failure(connection().containerLogs(ref, 'web', {}, new AbortController().signal));
    expect(err.message).toBe('container "web" in pod "web-1" has no log file: container runtime "simulated" does not keep one');
  });

  it('follows until the container exits, or until the kubelet stops', async () => {
    const box = await sandbox();
    const id = await container(box);
    const followed = logs(connection(), { follow: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await runtime.stopContainer(id, 0);
    expect(await followed).toBe('simulated container web started (image nginx:1.27)\n');

    await container(box, 1);
    const kubelet = new AbortController();
    const stopping = logs(connection({ signal: kubelet.signal }), { follow: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    kubelet.abort();
    expect(await stopping).toBe('simulated container web started (image nginx:1.27)\n');
  });
});

describe('the kubelet node connection: exec, attach, port-forward', () => {
  it("hands out the runtime's streaming URLs for the running container and the ready sandbox", async () => {
    const box = await sandbox();
    const id = await container(box);
    expect(await connection().streamURL('exec', ref, 'web', { cmd: ['ls', '-l'], stdout: true })).toBe(`https://node/exec/${id}?cmd=ls+-l`);
    expect(await connection().streamURL('attach', ref, 'web', { stdin: true, tty: true })).toBe(`https://node/attach/${id}`);
    expect(await connection().portForwardURL(ref, [80, 443])).toBe(`https://node/portforward/${box.id}?ports=80,443`);
  });

  it('refuses containers that are not running, and pods it does not run', async () => {
    const box = await sandbox();
    const missing = await failure(connection().streamURL('exec', ref, 'web', { cmd: ['sh'] }));
    expect(missing.message).toBe('container not found ("web")');
    const id = await container(box);
    await runtime.stopContainer(id, 0);
    const exited = await failure(connection().streamURL('attach', ref, 'web', {}));
    expect(exited.code).toBe('SKIFF_ERR_KUBELET_CONTAINER_NOT_RUNNING');
    expect(exited.message).toBe('container "web" in pod "web-1" is not running (it exited with code 0)');
    await runtime.stopPodSandbox(box.id);
    expect((await failure(connection().portForwardURL(ref, [80]))).code).toBe('SKIFF_ERR_KUBELET_POD_NOT_FOUND');
  });

  it('says so when the runtime has no streaming server', async () => {
    const plain = await simulatedRuntime(join(dir, 'plain'));
    const conn = new KubeletNodeConnection({ nodeName: 'node-1', runtime: plain });
    expect((await failure(conn.streamURL('exec', ref, 'web', {}))).message).toBe('container runtime "simulated" does not support exec');
    expect((await failure(conn.portForwardURL(ref, [80]))).code).toBe('SKIFF_ERR_KUBELET_STREAMING_UNSUPPORTED');
  });
});

describe('NodeConnectionRegistry', () => {
  it('is the nodeConnections component from the moment the kubelet plugin is applied', () => {
    const kernel = new Kernel({ config: { nodes: 0, logLevel: 'silent' } }).use(kubelet);
    expect(kernel.resolve('nodeConnections')).toBeInstanceOf(NodeConnectionRegistry);
  });

  it('finds connections by node name until they unregister, keeping a newer one of the same name', () => {
    const registry = new NodeConnectionRegistry();
    const first = connection();
    const second = connection();
    const unregisterFirst = registry.register('node-1', first);
    expect(registry.get('node-1')).toBe(first);
    const unregisterSecond = registry.register('node-1', second);
    unregisterFirst();
    expect(registry.get('node-1')).toBe(second);
    unregisterSecond();
    expect(registry.get('node-1')).toBeUndefined();
  });
});
