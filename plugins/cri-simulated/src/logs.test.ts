import { access, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContainerConfig, PodSandboxConfig } from '@skiff/kernel';
import { SimulatedRuntime } from './runtime.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-cri-simulated-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CRI_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z stdout F simulated container web started \(image nginx:1\.27\)\n$/;

const sandboxConfig = (logDirectory: string): PodSandboxConfig => ({
  metadata: { name: 'web-1', namespace: 'default', uid: 'uid-1', attempt: 0 },
  logDirectory,
});
const containerConfig = (logPath?: string): ContainerConfig => ({
  metadata: { name: 'web', attempt: 0 },
  image: { image: 'nginx:1.27' },
  ...(logPath ? { logPath } : {}),
});

async function started(rt: SimulatedRuntime, sandbox: PodSandboxConfig, container: ContainerConfig) {
  const sandboxId = await rt.runPodSandbox(sandbox);
  await rt.pullImage('nginx:1.27');
  const containerId = await rt.createContainer(sandboxId, container, sandbox);
  await rt.startContainer(containerId);
  return { sandboxId, containerId, logPath: (await rt.containerStatus(containerId))!.logPath };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('simulated container logs', () => {
  it("writes a CRI log line where the kubelet asks (logPath under the sandbox's logDirectory) and reports it", async () => {
    const rt = new SimulatedRuntime({}, undefined, join(dir, 'runtime'));
    const logDirectory = join(dir, 'log', 'pods', 'default_web-1_uid-1');
    const { containerId, logPath } = await started(rt, sandboxConfig(logDirectory), containerConfig('web/0.log'));
    expect(logPath).toBe(join(logDirectory, 'web', '0.log'));
    expect(await readFile(logPath!, 'utf8')).toMatch(CRI_LINE);
    // Readable by its owner and group, never by others (0640, or less under a stricter umask).
    const logMode = (await stat(logPath!)).mode & 0o777;
    expect([logMode & 0o600, logMode & ~0o640]).toEqual([0o600, 0]);
    await rt.stopContainer(containerId, 0);
    await rt.removeContainer(containerId);
    expect(await exists(logPath!)).toBe(false);
    expect(await exists(logDirectory)).toBe(false);
  });

  it('takes an absolute logPath as it is', async () => {
    const rt = new SimulatedRuntime({}, undefined, join(dir, 'runtime'));
    const absolute = join(dir, 'elsewhere', 'web', '0.log');
    const { logPath } = await started(rt, sandboxConfig(join(dir, 'log')), containerConfig(absolute));
    expect(logPath).toBe(absolute);
    await rt.close();
    expect(await exists(absolute)).toBe(false);
  });

  it('writes under its own folder when the log folder cannot be written', async () => {
    const rt = new SimulatedRuntime({}, undefined, join(dir, 'runtime'));
    await writeFile(join(dir, 'not-a-folder'), '');
    const { sandboxId, logPath } = await started(rt, sandboxConfig(join(dir, 'not-a-folder', 'pods')), containerConfig('web/0.log'));
    expect(logPath).toBe(join(dir, 'runtime', 'pods', 'default_web-1_uid-1', 'web', '0.log'));
    expect(await readFile(logPath!, 'utf8')).toMatch(CRI_LINE);
    await rt.stopPodSandbox(sandboxId);
    await rt.removePodSandbox(sandboxId);
    expect(await exists(logPath!)).toBe(false);
  });

  it('keeps no logs without a folder of its own, or when the kubelet asks for none', async () => {
    expect((await started(new SimulatedRuntime(), sandboxConfig(join(dir, 'log')), containerConfig('web/0.log'))).logPath).toBeUndefined();
    const rt = new SimulatedRuntime({}, undefined, join(dir, 'runtime'));
    expect((await started(rt, sandboxConfig(join(dir, 'log')), containerConfig())).logPath).toBeUndefined();
    expect(await exists(join(dir, 'log'))).toBe(false);
  });
});
