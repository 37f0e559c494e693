import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ContainerRuntime, Logger, PodSandboxConfig } from '@skiff/kernel';
import { mountsUnder } from '@skiff/node-host';
import { checkHost, ContainerdDaemon, containerdConfig, processesWithArgs, stateDirFor } from './daemon.js';
import { containerdRuntimeFactory } from './runtime-factory.js';
import { isDynamicElf } from './pause-image.js';
import type { ContainerdRuntime } from './runtime.js';

/** A file's text, or '' once it is gone (a process that ended). */
function readIfThere(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

const quiet: Logger = { child: () => quiet, trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {} } as unknown as Logger;

async function missingForRealContainers(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'not root';
  try {
    await checkHost('containerd');
  } catch (err) {
    return (err as Error).message;
  }
  if (!existsSync('/usr/bin/busybox')) return 'no /usr/bin/busybox (busybox-static)';
  return undefined;
}

describe('checks before containerd starts', () => {
  it('refuses a non-root start with one line pointing at the dev preset', async () => {
    const spy = vi.spyOn(process as { getuid(): number }, 'getuid').mockReturnValue(1000);
    try {
      await expect(checkHost('containerd')).rejects.toThrow(/needs root .*use the dev preset/);
    } finally {
      spy.mockRestore();
    }
  });

  it('names a missing containerd binary and the install script', async () => {
    const spy = vi.spyOn(process as { getuid(): number }, 'getuid').mockReturnValue(0);
    try {
      await expect(checkHost('/nonexistent/containerd')).rejects.toThrow(
        '/nonexistent/containerd was not found: install containerd, runc and the CNI plugins (bash scripts/install-system-deps.sh)',
      );
    } finally {
      spy.mockRestore();
    }
  });

  it('writes a configuration with everything under the node and the settings this kind of machine needs', () => {
    const config = containerdConfig({ baseDir: '/data/nodes/node-1/containerd', stateDir: '/run/x', sandboxImage: 'skiff.local/pause:3.10', logLevel: 'warn' });
    expect(config).toContain('root = "/data/nodes/node-1/containerd/root"');
    expect(config).toContain('address = "/run/x/containerd.sock"');
    for (const line of [
      'restrict_oom_score_adj = true',
      'disable_apparmor = true',
      'tolerate_missing_hugetlb_controller = true',
      'netns_mounts_under_state_dir = true',
      'SystemdCgroup = false',
      'sandbox_image = "skiff.local/pause:3.10"',
      'stream_server_address = "127.0.0.1"',
      // runc's state of the node's containers stays under the state dir, not in the host's shared /run/containerd/runc.
      'Root = "/run/x/runc"',
    ])
      expect(config).toContain(line);
  });

  it('keeps socket paths short whatever the data dir', () => {
    expect(`${stateDirFor(`/${'deep/'.repeat(40)}containerd`)}/containerd.sock.ttrpc`.length).toBeLessThan(108);
  });

  it('tells a static ELF from a dynamic one', () => {
    expect(isDynamicElf(readFileSync(process.execPath))).toBe(true);
    if (existsSync('/usr/bin/busybox')) expect(isDynamicElf(readFileSync('/usr/bin/busybox'))).toBe(false);
    expect(isDynamicElf(Buffer.from('#!/bin/sh\n'))).toBe(true);
  });
});

const missing = await missingForRealContainers();
if (missing) console.warn(`cri-containerd: real containerd tests skipped: ${missing}`);

describe.skipIf(missing !== undefined)('a real containerd through CRI', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-cri-'));
  let runtime: ContainerdRuntime;
  const sandboxConfig: PodSandboxConfig = {
    metadata: { name: 'probe', namespace: 'default', uid: 'uid-1', attempt: 0 },
    hostname: 'probe',
    logDirectory: join(dataDir, 'logs'),
    labels: { 'io.kubernetes.pod.uid': 'uid-1' },
  };

  let umask = 0o022;
  beforeAll(async () => {
    mkdirSync(join(dataDir, 'logs'), { recursive: true });
    // As `skiff up` runs: owner-only files by default, which containerd must not pass on to image layers.
    umask = process.umask(0o077);
    const factory = containerdRuntimeFactory({
      containerd: 'containerd',
      sandboxImage: 'skiff.local/pause:3.10',
      buildSandboxImage: true,
      imports: [],
      plainHttpRegistries: [],
      startTimeoutSeconds: 20,
      logLevel: 'warn',
    });
    runtime = (await factory.create({ nodeName: 'node-1', index: 0, dataDir, logger: quiet })) as ContainerdRuntime;
  }, 60_000);

  afterAll(async () => {
    process.umask(umask);
    await runtime?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reports containerd and CRI v1', async () => {
    expect(await runtime.version()).toMatchObject({ runtimeName: 'containerd', runtimeApiVersion: 'v1' });
  });

  it('builds and imports the pause image when the node has none', async () => {
    expect(await runtime.imageStatus('skiff.local/pause:3.10')).toMatchObject({ repoTags: ['skiff.local/pause:3.10'] });
  });

  it('runs a sandbox with its own network namespace, a container in it, ExecSync, logs, and tears it down', async () => {
    const sandboxId = await runtime.runPodSandbox(sandboxConfig);
    const sandbox = await runtime.podSandboxStatus(sandboxId);
    expect(sandbox).toMatchObject({ id: sandboxId, state: 'SANDBOX_READY', metadata: sandboxConfig.metadata });
    expect(existsSync(sandbox!.netnsPath!)).toBe(true);
    expect(await runtime.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-1' } })).toHaveLength(1);

    // The pause image doubles as a busybox: it has sh and sleep.
    const id = await runtime.createContainer(
      sandboxId,
      {
        metadata: { name: 'main', attempt: 0 },
        image: { image: 'skiff.local/pause:3.10' },
        command: ['sh', '-c', 'echo started; exec sleep 300'],
        envs: [{ key: 'GREETING', value: 'grüß dich' }],
        logPath: 'main/0.log',
      },
      sandboxConfig,
    );
    await runtime.startContainer(id);
    const [running] = await runtime.listContainers({ podSandboxId: sandboxId });
    expect(running).toMatchObject({ id, state: 'CONTAINER_RUNNING', podSandboxId: sandboxId, logPath: join(dataDir, 'logs', 'main/0.log') });
    expect(running!.startedAt).toBeGreaterThan(0);

    const hostname = await runtime.execSync(id, ['sh', '-c', 'read -r name < /etc/hostname && echo "$name"'], 5);
    expect({ out: hostname.stdout.toString(), code: hostname.exitCode }).toEqual({ out: 'probe\n', code: 0 });
    expect((await runtime.execSync(id, ['sh', '-c', 'exit 3'], 5)).exitCode).toBe(3);
    expect((await runtime.execSync(id, ['sh', '-c', 'echo "$GREETING"'], 5)).stdout.toString()).toBe('grüß dich\n');
    expect(await runtime.exec({ containerId: id, cmd: ['ls'], stdout: true })).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/exec\//);
    expect(readFileSync(join(dataDir, 'logs', 'main/0.log'), 'utf8')).toMatch(/^\S+Z stdout F started\n$/);

    await runtime.stopContainer(id, 1);
    const [exited] = await runtime.listContainers();
    expect(exited).toMatchObject({ id, state: 'CONTAINER_EXITED', exitCode: 137 });
    await runtime.removeContainer(id);
    await runtime.stopPodSandbox(sandboxId);
    await runtime.removePodSandbox(sandboxId);
    expect(existsSync(sandbox!.netnsPath!)).toBe(false);
    expect(await runtime.podSandboxStatus(sandboxId)).toBeUndefined();
    // Stopping and removing what is gone already is not an error (the kubelet retries teardown).
    await runtime.stopPodSandbox(sandboxId);
    await runtime.removeContainer(id);
  }, 60_000);

  it('runs a non-root container that can read its image (layers are not 0700), in its supplemental groups, with no_new_privs when asked', async () => {
    const sandboxId = await runtime.runPodSandbox(sandboxConfig);
    const run = async (name: string, noNewPrivs?: boolean) => {
      const id = await runtime.createContainer(
        sandboxId,
        {
          metadata: { name, attempt: 0 },
          image: { image: 'skiff.local/pause:3.10' },
          command: ['sleep', '300'],
          logPath: `${name}/0.log`,
          linux: { securityContext: { runAsUser: 1234, supplementalGroups: [2345], ...(noNewPrivs ? { noNewPrivs } : {}) } },
        },
        sandboxConfig,
      );
      await runtime.startContainer(id);
      const status = await runtime.execSync(
        id,
        ['sh', '-c', 'id -u; ls /bin/busybox >/dev/null && echo readable; grep NoNewPrivs /proc/self/status; grep ^Groups /proc/self/status'],
        5,
      );
      return status.stdout.toString().split('\n').filter(Boolean);
    };
    try {
      expect(await run('plain')).toEqual(['1234', 'readable', 'NoNewPrivs:\t0', expect.stringMatching(/^Groups:\t.*\b2345\b/)]);
      expect(await run('locked', true)).toEqual(['1234', 'readable', 'NoNewPrivs:\t1', expect.stringMatching(/^Groups:\t.*\b2345\b/)]);
    } finally {
      await runtime.stopPodSandbox(sandboxId);
      await runtime.removePodSandbox(sandboxId);
    }
  }, 60_000);

  it("answers a failed pull with the registry's message", async () => {
    await expect(runtime.pullImage('127.0.0.1:1/nothing/here:1')).rejects.toThrow(
      /^rpc error: code = \w+ desc = failed to pull and unpack image "127.0.0.1:1\/nothing\/here:1".*connection refused/,
    );
  });

  it('starts containerd again when it is killed; a call made meanwhile waits for it, and the sandbox is still there', async () => {
    const config = join(dataDir, 'containerd', 'config.toml');
    const sandboxId = await runtime.runPodSandbox({
      ...sandboxConfig,
      metadata: { ...sandboxConfig.metadata, name: 'survivor', uid: 'uid-3' },
      labels: { 'io.kubernetes.pod.uid': 'uid-3' },
    });
    const [first] = processesWithArgs('containerd', ['--config', config]);
    process.kill(first!, 'SIGKILL');
    const listed = await runtime.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-3' } });
    expect(listed.map((sandbox) => [sandbox.id, sandbox.state])).toEqual([[sandboxId, 'SANDBOX_READY']]);
    const [second] = processesWithArgs('containerd', ['--config', config]);
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);
    await runtime.stopPodSandbox(sandboxId);
    await runtime.removePodSandbox(sandboxId);
  }, 60_000);

  it('stops containerd and every shim of its own at close', async () => {
    const socket = join(stateDirFor(join(dataDir, 'containerd')), 'containerd.sock');
    const sandboxId = await runtime.runPodSandbox({ ...sandboxConfig, metadata: { ...sandboxConfig.metadata, name: 'left', uid: 'uid-2' } });
    expect(sandboxId).toBeTruthy();
    const pauseOf = (id: string) =>
      readdirSync('/proc').filter(
        (pid) => /^\d+$/.test(pid) && !/^State:\s+Z/m.test(readIfThere(`/proc/${pid}/status`)) && readIfThere(`/proc/${pid}/cgroup`).includes(id),
      );
    expect(pauseOf(sandboxId)).not.toEqual([]);
    const shims = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes('containerd-shim') && line.includes(socket));
    expect(shims().length).toBeGreaterThan(0);
    await runtime.close();
    expect(shims()).toEqual([]);
    expect(existsSync(socket)).toBe(false);
    // The sandbox left running kept mounts (shm, netns, rootfs): they went with containerd's state dir.
    expect(await mountsUnder(stateDirFor(join(dataDir, 'containerd')))).toEqual([]);
    expect(existsSync(stateDirFor(join(dataDir, 'containerd')))).toBe(false);
    // Its pause process went too (runc deleted the container), and nothing of it stays in the host's shared folders.
    expect(pauseOf(sandboxId)).toEqual([]);
    expect(existsSync(join('/run/containerd/runc/k8s.io', sandboxId))).toBe(false);
    expect(readdirSync('/var/lib/cni/results').filter((name) => name.includes(sandboxId))).toEqual([]);
    runtime = undefined as unknown as ContainerRuntime as ContainerdRuntime;
  }, 60_000);
});

describe.skipIf(missing !== undefined)('a containerd left running by an earlier run', () => {
  it('is adopted by the next start of the node, and stopped with it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-cri-adopt-'));
    const baseDir = join(dataDir, 'containerd');
    const options = {
      baseDir,
      binary: 'containerd',
      sandboxImage: 'skiff.local/pause:3.10',
      plainHttpRegistries: [],
      logLevel: 'warn',
      startTimeoutSeconds: 20,
      logger: quiet,
    };
    try {
      // A containerd an earlier Skiff of this node left running when it was killed with -9: started here by hand with
      // the node's configuration (a first start and stop write it), in a session of its own as Skiff starts it.
      await (await ContainerdDaemon.start(options)).stop();
      const config = join(baseDir, 'config.toml');
      const left = spawn('containerd', ['--config', config], { detached: true, stdio: 'ignore' });
      const socket = join(stateDirFor(baseDir), 'containerd.sock');
      for (let waited = 0; !existsSync(socket); waited += 20) {
        if (waited > 20_000) throw new Error(`containerd made no socket at ${socket}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const daemon = await ContainerdDaemon.start(options);
      expect(daemon.socket).toBe(socket);
      expect(processesWithArgs('containerd', ['--config', config])).toEqual([left.pid]);
      await daemon.stop();
      expect(processesWithArgs('containerd', ['--config', config])).toEqual([]);
      expect(existsSync(daemon.stateDir)).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
