import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Pod } from '@skiff/api';
import criContainerd from '@skiff/plugin-cri-containerd';
import { nodeContainerdSocket } from '@skiff/plugin-cri-containerd/images';
import networkIpam from '@skiff/plugin-network-ipam';
import leastAllocated from '@skiff/plugin-scheduler-least-allocated';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import volumesBuiltin from '@skiff/plugin-volumes-builtin';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import kubelet from './index.js';
import { adminKubeconfig, podLog } from './test-support/api-https.js';

// The kubelet over a real containerd (started by the runtime plugin in the node's data dir) and runc: needs root
// and containerd; without them this file skips and says why. The pause image the plugin builds from the host's
// static busybox doubles as the containers' image (it has sh, echo and sleep).
function missingForRealContainers(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  if (!existsSync('/usr/bin/busybox')) return 'no /usr/bin/busybox (busybox-static)';
  for (const dir of (process.env.PATH ?? '').split(':')) if (existsSync(`${dir}/containerd`) && existsSync('/usr/sbin/runc')) return undefined;
  return 'containerd or runc is not installed (bash scripts/install-system-deps.sh)';
}
const missing = missingForRealContainers();
if (missing) console.warn(`kubelet: real-container tests skipped: ${missing}`);

const IMAGE = 'skiff.local/pause:3.10';
const WAIT = { timeoutMs: 60_000, intervalMs: 200 };

let cluster: ControlPlane;
const kubeDir = mkdtempSync(join(tmpdir(), 'skiff-kubelet-kubectl-'));
beforeAll(async () => {
  if (missing) return;
  cluster = await startControlPlane(
    [
      scheduler,
      resourcesFit,
      leastAllocated,
      [kubelet, { heartbeatSeconds: 1, runtime: 'containerd', crashLoopBackoffBaseSeconds: 0.5, crashLoopBackoffMaxSeconds: 1 }],
      criContainerd,
      networkIpam,
      volumesBuiltin,
    ],
    { config: { nodes: 1, logLevel: 'silent' } },
  );
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(kubeDir, { recursive: true, force: true });
}, 60_000);

/** kubectl (the one on PATH) against the cluster, with `input` on its stdin. */
function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const kubeconfig = join(kubeDir, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(cluster));
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--cache-dir', join(kubeDir, 'cache'), ...args],
      { timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

const pod = (name: string, script: string, spec: Partial<Pod['spec']> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', script] }], terminationGracePeriodSeconds: 1, ...spec },
});
const getPod = (name: string) => cluster.client.get<Pod>(RESOURCES.pods, name, 'default');

describe.skipIf(missing !== undefined)('the kubelet with containerd', () => {
  it('serves the log of a container that exited, from its CRI log file, until the pod is deleted', async () => {
    await cluster.client.create(RESOURCES.pods, pod('exited', 'echo hello; sleep 0.2; echo oops >&2; exit 3', { restartPolicy: 'Never' }), 'default');
    const failed = await waitFor(
      'the pod to fail',
      async () => {
        const current = await getPod('exited');
        return current.status?.phase === 'Failed' && current;
      },
      WAIT,
    );
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(await podLog(cluster, 'default', 'exited')).toEqual({ status: 200, text: 'hello\noops\n' });
    expect(await podLog(cluster, 'default', 'exited', 'tailLines=1')).toEqual({ status: 200, text: 'oops\n' });
    await cluster.client.delete(RESOURCES.pods, 'exited', 'default');
  }, 90_000);

  it('serves the instance a restart replaced with previous=true', async () => {
    // The first run leaves a mark in an emptyDir and fails; the second finds it and keeps running.
    const script = 'if [ -e /mark/first ]; then echo second run; exec sleep 300; fi; : > /mark/first; echo first run; exit 1';
    const spec = pod('restarting', script, { volumes: [{ name: 'mark', emptyDir: {} }] });
    spec.spec.containers[0]!.volumeMounts = [{ name: 'mark', mountPath: '/mark' }];
    await cluster.client.create(RESOURCES.pods, spec, 'default');
    await waitFor(
      'the second run',
      async () => {
        const status = (await getPod('restarting')).status?.containerStatuses?.[0];
        return status?.restartCount === 1 && status.state?.running;
      },
      WAIT,
    );
    expect(await podLog(cluster, 'default', 'restarting', 'previous=true')).toEqual({ status: 200, text: 'first run\n' });
    expect(await podLog(cluster, 'default', 'restarting')).toEqual({ status: 200, text: 'second run\n' });
    await cluster.client.delete(RESOURCES.pods, 'restarting', 'default');
  }, 90_000);

  it('serves the last run of a container waiting out its crash-loop back-off, also as previous', async () => {
    await cluster.client.create(RESOURCES.pods, pod('crashing', 'echo "run $(cat /proc/uptime)"; exit 1'), 'default');
    const lastId = await waitFor(
      'a back-off after a restart',
      async () => {
        const status = (await getPod('crashing')).status?.containerStatuses?.[0];
        return status && status.restartCount >= 1 && status.state?.waiting?.reason === 'CrashLoopBackOff' && status.lastState?.terminated?.containerID;
      },
      WAIT,
    );
    expect(lastId).toBeTruthy();
    // While it waits out a back-off, the current log and the previous one are the same run. A restart may fall
    // between the two reads (the status can lag the runtime); then the current log is a later run (a larger
    // uptime, or nothing yet), and the pair is read again.
    const uptime = (text: string) => Number(/^run (\d+(?:\.\d+)?)/.exec(text)?.[1]);
    let same = false;
    for (let attempt = 0; attempt < 5 && !same; attempt++) {
      const previous = await podLog(cluster, 'default', 'crashing', 'previous=true');
      const latest = await podLog(cluster, 'default', 'crashing');
      expect(previous).toEqual({ status: 200, text: expect.stringMatching(/^run \d/) });
      expect(latest.status).toBe(200);
      same = latest.text === previous.text;
      // A run just started may not have written yet.
      if (!same && latest.text !== '') expect(uptime(latest.text)).toBeGreaterThan(uptime(previous.text));
    }
    expect(same).toBe(true);
    await cluster.client.delete(RESOURCES.pods, 'crashing', 'default');
  }, 90_000);

  it('kills the containers of a pod past its activeDeadlineSeconds and keeps their log', async () => {
    await cluster.client.create(RESOURCES.pods, pod('deadline', 'echo up; exec sleep 300'), 'default');
    await waitFor('the pod to run', async () => (await getPod('deadline')).status?.phase === 'Running', WAIT);
    await cluster.client.patch(RESOURCES.pods, 'deadline', { spec: { activeDeadlineSeconds: 2 } }, { namespace: 'default', patchType: 'merge' });
    const terminated = await waitFor(
      'the container to be killed',
      async () => (await getPod('deadline')).status?.containerStatuses?.[0]?.state?.terminated,
      WAIT,
    );
    // sleep as process 1 has no SIGTERM handler: the grace period ends with SIGKILL.
    expect(terminated.exitCode).toBe(137);
    expect((await getPod('deadline')).status).toMatchObject({ phase: 'Failed', reason: 'DeadlineExceeded' });
    expect(await podLog(cluster, 'default', 'deadline')).toEqual({ status: 200, text: 'up\n' });
    await cluster.client.delete(RESOURCES.pods, 'deadline', 'default');
  }, 90_000);

  it('runs kubectl debug: an ephemeral container in the running pod, its logs, exec into it, and -i attached to it', async () => {
    await cluster.client.create(RESOURCES.pods, pod('debuggee', 'exec sleep 300'), 'default');
    await waitFor('the pod to run', async () => (await getPod('debuggee')).status?.phase === 'Running', WAIT);
    const debug = await kubectl([
      'debug',
      'debuggee',
      '--profile=general',
      '-c',
      'debugger',
      `--image=${IMAGE}`,
      '--',
      'sh',
      '-c',
      'while true; do echo polo; sleep 1; done',
    ]);
    expect(debug).toMatchObject({ code: 0, stderr: '' });
    await waitFor('the ephemeral container to run', async () => (await getPod('debuggee')).status?.ephemeralContainerStatuses?.[0]?.state?.running, WAIT);
    await waitFor('its output', async () => (await kubectl(['logs', 'debuggee', '-c', 'debugger'])).stdout.includes('polo\n'), WAIT);
    expect(await kubectl(['exec', 'debuggee', '-c', 'debugger', '--', 'sh', '-c', 'echo marco'])).toEqual({ code: 0, stdout: 'marco\n', stderr: '' });

    const attached = await kubectl(
      ['debug', '-i', 'debuggee', '--profile=general', '-c', 'shell', `--image=${IMAGE}`, '--', 'sh', '-c', 'read -r word; echo "got $word"'],
      'ping\n',
    );
    expect(attached.stdout).toContain('got ping\n');
    const shell = await waitFor(
      'the attached container to show its exit',
      async () => (await getPod('debuggee')).status?.ephemeralContainerStatuses?.find((status) => status.name === 'shell')?.state?.terminated,
      WAIT,
    );
    expect(shell).toMatchObject({ exitCode: 0, reason: 'Completed' });
    // It is not started again: ephemeral containers run once.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await getPod('debuggee')).status?.ephemeralContainerStatuses?.find((status) => status.name === 'shell')?.restartCount).toBe(0);
    await cluster.client.delete(RESOURCES.pods, 'debuggee', 'default');
  }, 120_000);

  it('leaves no sandbox process, network namespace or mount behind once its pods, finished ones too, are deleted', async () => {
    await cluster.client.create(RESOURCES.pods, pod('finishes', 'echo done', { restartPolicy: 'Never' }), 'default');
    await waitFor('the pod to succeed', async () => (await getPod('finishes')).status?.phase === 'Succeeded', WAIT);
    for (const left of (await cluster.client.list<Pod>(RESOURCES.pods, 'default')).items)
      await cluster.client.delete(RESOURCES.pods, left.metadata.name!, 'default', { gracePeriodSeconds: 1 });
    await waitFor('every pod to be gone', async () => (await cluster.client.list<Pod>(RESOURCES.pods, 'default')).items.length === 0, WAIT);
    const socket = nodeContainerdSocket(join(cluster.dataDir, 'nodes', 'node-1'));
    const stateDir = join(socket, '..');
    const shims = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes('containerd-shim') && line.includes(socket));
    await waitFor('the shims to end', () => shims().length === 0, WAIT);
    const netns = join(stateDir, 'io.containerd.grpc.v1.cri', 'netns');
    await waitFor('the network namespaces to go', () => !existsSync(netns) || readdirSync(netns).length === 0, { timeoutMs: 20_000, intervalMs: 200 });
    const mounts = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .filter((line) => line.includes(stateDir) || line.includes(join(cluster.dataDir, 'nodes', 'node-1', 'containerd')));
    expect(mounts).toEqual([]);
  }, 90_000);
});
