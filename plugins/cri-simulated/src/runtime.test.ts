import { describe, expect, it } from 'vitest';
import { waitFor, type ContainerConfig, type PodSandboxConfig } from '@skiff/kernel';
import { immediateExit, SimulatedRuntime, sleepSeconds } from './runtime.js';
import { RuntimeError } from './errors.js';
import { normalizeImage, repoDigest } from './images.js';
import {
  CONTAINER_ROLE_LABEL,
  RESTART_POLICY_LABEL,
  SIMULATE_EXEC_EXIT_CODE_ANNOTATION,
  SIMULATE_EXIT_CODE_ANNOTATION,
  SIMULATE_RUN_MS_ANNOTATION,
} from './names.js';

const sandboxConfig = (uid = 'uid-1', attempt = 0): PodSandboxConfig => ({
  metadata: { name: 'web-1', namespace: 'default', uid, attempt },
  labels: { 'io.kubernetes.pod.uid': uid },
});
const containerConfig = (name = 'nginx', image = 'nginx', labels: Record<string, string> = {}): ContainerConfig => ({
  metadata: { name, attempt: 0 },
  image: { image },
  labels,
});

function runtime(options: Partial<{ startDelayMs: number; pullDelayMs: number; runMs: number; failImages: string[] }> = {}) {
  return new SimulatedRuntime({ startDelayMs: 0, pullDelayMs: 0, failImages: [], ...options });
}

/** Starts one container of a pod with this restart policy and these pod annotations. */
let pods = 0;
async function podContainer(rt: SimulatedRuntime, restartPolicy: string, annotations: Record<string, string> = {}) {
  pods += 1;
  const sandbox = { ...sandboxConfig(`pod-${pods}`), annotations };
  const sandboxId = await rt.runPodSandbox(sandbox);
  await rt.pullImage('busybox');
  const containerId = await rt.createContainer(sandboxId, containerConfig('main', 'busybox', { [RESTART_POLICY_LABEL]: restartPolicy }), sandbox);
  await rt.startContainer(containerId);
  return { sandboxId, containerId };
}

const exited = (rt: SimulatedRuntime, id: string) =>
  waitFor(`container ${id} to exit`, async () => {
    const status = await rt.containerStatus(id);
    return status?.state === 'CONTAINER_EXITED' && status;
  });

async function runningContainer(rt: SimulatedRuntime) {
  const sandboxId = await rt.runPodSandbox(sandboxConfig());
  await rt.pullImage('nginx');
  const containerId = await rt.createContainer(sandboxId, containerConfig(), sandboxConfig());
  await rt.startContainer(containerId);
  return { sandboxId, containerId };
}

describe('SimulatedRuntime', () => {
  it('runs a sandbox with a unique id and its own netns path', async () => {
    const rt = runtime();
    const a = await rt.runPodSandbox(sandboxConfig('a'));
    const b = await rt.runPodSandbox(sandboxConfig('b'));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    const status = await rt.podSandboxStatus(a);
    expect(status).toMatchObject({ id: a, state: 'SANDBOX_READY', metadata: { name: 'web-1', uid: 'a' } });
    expect(status!.netnsPath).toMatch(/^\/var\/run\/netns\/cni-/);
    expect(status!.netnsPath).not.toBe((await rt.podSandboxStatus(b))!.netnsPath);
    expect(await rt.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'b' } })).toHaveLength(1);
  });

  it('refuses a second sandbox with the same name and attempt', async () => {
    const rt = runtime();
    await rt.runPodSandbox(sandboxConfig());
    await expect(rt.runPodSandbox(sandboxConfig())).rejects.toThrow(/reserved/);
    await expect(rt.runPodSandbox(sandboxConfig('uid-1', 1))).resolves.toMatch(/^[0-9a-f]{64}$/);
  });

  it('pulls images to a stable digest and reports them', async () => {
    const rt = runtime();
    const first = await rt.pullImage('nginx');
    expect(first).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await rt.pullImage('docker.io/library/nginx:latest')).toBe(first);
    expect(await runtime().pullImage('nginx')).toBe(first);
    expect(await rt.pullImage('nginx:1.27')).not.toBe(first);
    expect(await rt.imageStatus('nginx')).toMatchObject({ id: first, repoTags: ['docker.io/library/nginx:latest'] });
    expect(await rt.imageStatus('redis')).toBeUndefined();
  });

  it('fails pulls of configured images with ErrImagePull', async () => {
    const rt = runtime({ failImages: ['does-not/exist'] });
    const err = await rt.pullImage('docker.io/does-not/exist:latest').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuntimeError);
    expect((err as RuntimeError).reason).toBe('ErrImagePull');
    expect((err as RuntimeError).message).toContain('docker.io/does-not/exist:latest');
  });

  it('creates, starts and stops a container through the CRI states', async () => {
    const rt = runtime();
    const sandboxId = await rt.runPodSandbox(sandboxConfig());
    await rt.pullImage('nginx');
    const id = await rt.createContainer(sandboxId, containerConfig(), sandboxConfig());
    expect(await rt.containerStatus(id)).toMatchObject({ state: 'CONTAINER_CREATED', podSandboxId: sandboxId, imageRef: repoDigest('nginx') });
    await rt.startContainer(id);
    const running = await rt.containerStatus(id);
    expect(running).toMatchObject({ state: 'CONTAINER_RUNNING' });
    expect(running!.startedAt).toBeGreaterThanOrEqual(running!.createdAt);
    await expect(rt.startContainer(id)).rejects.toThrow(/only a created container can start/);
    await rt.stopContainer(id, 30);
    expect(await rt.containerStatus(id)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0, reason: 'Completed' });
    expect(await rt.listContainers({ podSandboxId: sandboxId })).toHaveLength(1);
  });

  it('needs the image pulled and the sandbox ready to create a container', async () => {
    const rt = runtime();
    const sandboxId = await rt.runPodSandbox(sandboxConfig());
    await expect(rt.createContainer(sandboxId, containerConfig(), sandboxConfig())).rejects.toThrow(/not present/);
    await rt.pullImage('nginx');
    await expect(rt.createContainer('nope', containerConfig(), sandboxConfig())).rejects.toThrow(/sandbox "nope" not found/);
    await rt.createContainer(sandboxId, containerConfig(), sandboxConfig());
    await expect(rt.createContainer(sandboxId, containerConfig(), sandboxConfig())).rejects.toThrow(/reserved/);
    await rt.stopPodSandbox(sandboxId);
    await expect(rt.createContainer(sandboxId, containerConfig('other'), sandboxConfig())).rejects.toThrow(/not ready/);
  });

  it('removes containers and sandboxes only once stopped', async () => {
    const rt = runtime();
    const { sandboxId, containerId } = await runningContainer(rt);
    await expect(rt.removeContainer(containerId)).rejects.toThrow(/stop it before removing it/);
    await expect(rt.removePodSandbox(sandboxId)).rejects.toThrow(/stop it before removing it/);
    await rt.stopPodSandbox(sandboxId);
    expect(await rt.containerStatus(containerId)).toMatchObject({ state: 'CONTAINER_EXITED' });
    expect(await rt.podSandboxStatus(sandboxId)).toMatchObject({ state: 'SANDBOX_NOTREADY' });
    await rt.removePodSandbox(sandboxId);
    expect(await rt.podSandboxStatus(sandboxId)).toBeUndefined();
    expect(await rt.containerStatus(containerId)).toBeUndefined();
  });

  it('treats stop and remove of removed ids as done, and unknown ids as errors', async () => {
    const rt = runtime();
    const { sandboxId, containerId } = await runningContainer(rt);
    await rt.stopPodSandbox(sandboxId);
    await rt.removePodSandbox(sandboxId);
    await expect(rt.stopPodSandbox(sandboxId)).resolves.toBeUndefined();
    await expect(rt.removePodSandbox(sandboxId)).resolves.toBeUndefined();
    await expect(rt.removeContainer(containerId)).resolves.toBeUndefined();
    await expect(rt.stopContainer('never-existed', 0)).rejects.toThrow(/container "never-existed" not found/);
    await expect(rt.removePodSandbox('never-existed')).rejects.toThrow(/sandbox "never-existed" not found/);
    await expect(rt.startContainer('never-existed')).rejects.toThrow(/not found/);
  });

  it('takes startDelayMs to start, and a stop during the start wins', async () => {
    const rt = runtime({ startDelayMs: 30 });
    const sandboxId = await rt.runPodSandbox(sandboxConfig());
    await rt.pullImage('nginx');
    const id = await rt.createContainer(sandboxId, containerConfig(), sandboxConfig());
    const begun = Date.now();
    const starting = rt.startContainer(id);
    expect((await rt.containerStatus(id))!.state).toBe('CONTAINER_CREATED');
    await starting;
    expect(Date.now() - begun).toBeGreaterThanOrEqual(25);
    expect((await rt.containerStatus(id))!.state).toBe('CONTAINER_RUNNING');

    const second = await rt.createContainer(sandboxId, containerConfig('second'), sandboxConfig());
    const startingSecond = rt.startContainer(second);
    await rt.stopContainer(second, 0);
    await startingSecond;
    expect((await rt.containerStatus(second))!.state).toBe('CONTAINER_EXITED');
  });

  it('runs init containers to completion', async () => {
    const rt = runtime();
    const sandboxId = await rt.runPodSandbox(sandboxConfig());
    await rt.pullImage('busybox');
    const id = await rt.createContainer(sandboxId, containerConfig('init', 'busybox', { [CONTAINER_ROLE_LABEL]: 'init' }), sandboxConfig());
    await rt.startContainer(id);
    expect(await rt.containerStatus(id)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0, reason: 'Completed' });
  });

  it('lets containers of run-to-completion pods exit by themselves after runMs, with exit code 0', async () => {
    const rt = runtime({ runMs: 50 });
    for (const policy of ['Never', 'OnFailure']) {
      const { containerId } = await podContainer(rt, policy);
      const started = Date.now();
      expect((await rt.containerStatus(containerId))!.state).toBe('CONTAINER_RUNNING');
      const status = await exited(rt, containerId);
      expect(status).toMatchObject({ exitCode: 0, reason: 'Completed' });
      expect(status.finishedAt! - started).toBeGreaterThanOrEqual(45);
      expect(status.finishedAt! - status.startedAt!).toBeGreaterThanOrEqual(45);
    }
  });

  it('runs a run-to-completion container whose command is `sleep N` for N seconds', async () => {
    const rt = runtime({ runMs: 10 });
    const sandbox = sandboxConfig('sleeper');
    const sandboxId = await rt.runPodSandbox(sandbox);
    await rt.pullImage('busybox');
    const labels = { [RESTART_POLICY_LABEL]: 'Never' };
    const start = async (name: string, command: string[]) => {
      const id = await rt.createContainer(sandboxId, { ...containerConfig(name, 'busybox', labels), command }, sandbox);
      await rt.startContainer(id);
      return id;
    };
    const long = await start('long', ['sleep', '1000000']);
    const shell = await start('shell', ['/bin/sh', '-c', 'sleep 0.05']);
    const other = await start('other', ['sh', '-c', 'sleep 1000; echo done']);
    const status = await exited(rt, shell);
    expect(status.finishedAt! - status.startedAt!).toBeGreaterThanOrEqual(45);
    await exited(rt, other);
    expect((await rt.containerStatus(long))!.state).toBe('CONTAINER_RUNNING');
    expect([sleepSeconds(['sleep', '5']), sleepSeconds(['/bin/bash', '-c', ' sleep 2 ']), sleepSeconds(['sleep', 'inf']), sleepSeconds(['sleep'])]).toEqual([
      5,
      2,
      undefined,
      undefined,
    ]);
  });

  it('ends `false` at once with exit code 1 and `true` with 0, init containers too', async () => {
    const rt = runtime({ runMs: 60_000 });
    const sandbox = sandboxConfig('truth');
    const sandboxId = await rt.runPodSandbox(sandbox);
    await rt.pullImage('busybox');
    const start = async (name: string, command: string[], labels: Record<string, string>) => {
      const id = await rt.createContainer(sandboxId, { ...containerConfig(name, 'busybox', labels), command }, sandbox);
      await rt.startContainer(id);
      return id;
    };
    const init = await start('init', ['/bin/false'], { [CONTAINER_ROLE_LABEL]: 'init' });
    const app = await start('app', ['sh', '-c', 'true'], { [RESTART_POLICY_LABEL]: 'Always' });
    expect(await exited(rt, init)).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(await exited(rt, app)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect([immediateExit(['false', 'x']), immediateExit(['sleep', '1'])]).toEqual([undefined, undefined]);
    // An exec probe of `/bin/false` fails, of `true` passes, whatever else runs.
    const running = await start('running', ['sleep', '600'], { [RESTART_POLICY_LABEL]: 'Always' });
    expect((await rt.execSync(running, ['/bin/false'], 1)).exitCode).toBe(1);
    expect((await rt.execSync(running, ['true'], 1)).exitCode).toBe(0);
    expect((await rt.execSync(running, ['cat', '/tmp/health'], 1)).exitCode).toBe(0);
  });

  it('exits with the code and run time the pod asks for: Error for a non-zero code', async () => {
    const rt = runtime({ runMs: 60_000 });
    const { containerId } = await podContainer(rt, 'Never', { [SIMULATE_RUN_MS_ANNOTATION]: '10', [SIMULATE_EXIT_CODE_ANNOTATION]: '3' });
    expect(await exited(rt, containerId)).toMatchObject({ exitCode: 3, reason: 'Error' });
  });

  it('keeps containers of restartPolicy Always pods running, unless the pod sets a run time', async () => {
    const rt = runtime({ runMs: 10 });
    const forever = await podContainer(rt, 'Always');
    const crashing = await podContainer(rt, 'Always', { [SIMULATE_RUN_MS_ANNOTATION]: '10', [SIMULATE_EXIT_CODE_ANNOTATION]: '1' });
    expect(await exited(rt, crashing.containerId)).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect((await rt.containerStatus(forever.containerId))!.state).toBe('CONTAINER_RUNNING');
    // A container label from an older kubelet (no restart policy) means the same as Always.
    const { containerId } = await runningContainer(rt);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect((await rt.containerStatus(containerId))!.state).toBe('CONTAINER_RUNNING');
  });

  it('ignores annotations that are not whole numbers in range', async () => {
    const rt = runtime({ runMs: 10 });
    const { containerId } = await podContainer(rt, 'Never', { [SIMULATE_RUN_MS_ANNOTATION]: 'soon', [SIMULATE_EXIT_CODE_ANNOTATION]: '300' });
    expect(await exited(rt, containerId)).toMatchObject({ exitCode: 0, reason: 'Completed' });
  });

  it('a stop before the run time is up wins: the container stays stopped with exit code 0', async () => {
    const rt = runtime({ runMs: 30 });
    const { sandboxId, containerId } = await podContainer(rt, 'Never', { [SIMULATE_EXIT_CODE_ANNOTATION]: '2' });
    await rt.stopPodSandbox(sandboxId);
    const stopped = await rt.containerStatus(containerId);
    expect(stopped).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0, reason: 'Completed' });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await rt.containerStatus(containerId)).toEqual(stopped);
  });

  it('answers ExecSync in running containers with exit code 0, or the code the pod asks for', async () => {
    const rt = runtime();
    expect(rt.simulated).toBe(true);
    const { containerId: passing } = await podContainer(rt, 'Always');
    expect(await rt.execSync(passing, ['cat', '/tmp/healthy'], 1)).toEqual({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 });
    const { containerId: failing } = await podContainer(rt, 'Always', { [SIMULATE_EXEC_EXIT_CODE_ANNOTATION]: '1' });
    expect((await rt.execSync(failing, ['check'], 1)).exitCode).toBe(1);
    await rt.stopContainer(passing, 0);
    await expect(rt.execSync(passing, ['x'], 1)).rejects.toThrow(/is not running: cannot exec in it/);
    await expect(rt.execSync('nope', ['x'], 1)).rejects.toThrow('container "nope" not found');
  });

  it('hands out copies, never its own records', async () => {
    const rt = runtime();
    const { sandboxId, containerId } = await runningContainer(rt);
    const status = await rt.containerStatus(containerId);
    status!.state = 'CONTAINER_EXITED';
    (await rt.podSandboxStatus(sandboxId))!.state = 'SANDBOX_NOTREADY';
    expect((await rt.containerStatus(containerId))!.state).toBe('CONTAINER_RUNNING');
    expect((await rt.podSandboxStatus(sandboxId))!.state).toBe('SANDBOX_READY');
  });

  it('normalizes image references like a registry client', () => {
    expect(normalizeImage('nginx')).toBe('docker.io/library/nginx:latest');
    expect(normalizeImage('me/app:1.0')).toBe('docker.io/me/app:1.0');
    expect(normalizeImage('localhost:5000/app')).toBe('localhost:5000/app:latest');
    expect(normalizeImage('quay.io/org/app@sha256:abc')).toBe('quay.io/org/app@sha256:abc');
  });
});
