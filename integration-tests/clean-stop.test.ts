import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { nodeContainerdSocket } from '@skiff/plugin-cri-containerd/images';
import { kubectlOn, kubectlVersions, podRunning, waitForPod } from './clients.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';
import { unreachableRoutes } from './routes.js';
import { buildTestImages, missingPrerequisites } from '../scripts/test-images.mjs';

// However `skiff up --preset local` is stopped — Ctrl-C to its process group, SIGTERM to it alone, SIGTERM to it
// and containerd at once (a service manager stopping the unit), containerd killed first, containerd unable to come
// back, a second signal during the stop — nothing of the node stays on the host once it has stopped (or, for the
// second signal, once the next start has stopped): no process, container, cgroup, mount, network namespace, veth,
// bridge, iptables rule, shim socket or CNI result. Real containers need root, so without root this file skips.

const notRoot = process.getuid?.() !== 0;
if (notRoot) console.log('clean-stop.test.ts skipped: real containers need root (the dev preset runs simulated ones)');

const project = tempDir('clean-stop');
const cacheDir = tempDir('clean-stop-cache');
const WAIT = { timeoutMs: 60_000, intervalMs: 100 };
/** Its own bridge and pod range, so that another local cluster on this machine (a test running beside) is not ours. */
const BRIDGE = 'skcs0';
const wrapper = join(project, 'containerd-wrapper');
const refuse = join(project, 'refuse-containerd');
const slow = join(project, 'slow-containerd');
let skiff: RunningSkiff | undefined;
const dataDirs: string[] = [];
const { ok, json } = kubectlOn(kubectlVersions().find((v) => v.minor === 36)!.path, () => skiff!.kubeconfig, cacheDir);

const config = (containerd: string) => `export default {
  preset: 'local',
  plugins: [
    ['@skiff/plugin-cri-containerd', { containerd: ${JSON.stringify(containerd)}, imports: [${JSON.stringify(join(project, 'images', 'busybox.oci.tar'))}] }],
    ['@skiff/plugin-cni-bridge', { bridgeName: 'skcs', clusterCIDR: '10.245.0.0/16' }],
  ],
};
`;

const nodeDirOf = (dataDir: string) => join(dataDir, 'nodes', 'node-1');

/** A file's text, or '' when it is gone (processes exit and other clusters remove their files while we look). */
function readIfThere(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function processArgs(pid: string): string {
  return readIfThere(`/proc/${pid}/cmdline`).split('\0').join(' ').trim();
}

/** Live processes: a zombie has ended and holds nothing but its exit status until init reaps it. */
function pids(): string[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && !/^State:\s+Z/m.test(readIfThere(`/proc/${entry}/status`)));
}

/** The node's containerd, found by its configuration file. */
function containerdPid(nodeDir: string): number | undefined {
  const marker = `--config ${join(nodeDir, 'containerd', 'config.toml')}`;
  const found = pids().find((pid) => processArgs(pid).endsWith(marker));
  return found === undefined ? undefined : Number(found);
}

function lines(command: string, args: string[]): string[] {
  return execFileSync(command, args, { encoding: 'utf8' }).split('\n').filter(Boolean);
}

/** What the node had on the host while it ran, to look for again after the stop. */
interface Seen {
  containers: string[];
  veths: string[];
  chains: string[];
}

function see(nodeDir: string): Seen {
  const runcRoot = join(dirname(nodeContainerdSocket(nodeDir)), 'runc', 'k8s.io');
  const tagged = lines('iptables-save', []).filter((line) => line.includes(`name: \\"${BRIDGE}\\"`));
  return {
    containers: existsSync(runcRoot) ? readdirSync(runcRoot) : [],
    veths: lines('ip', ['-o', 'link', 'show', 'master', BRIDGE]).map((line) => line.split(': ')[1]!.split('@')[0]!),
    chains: [...new Set(tagged.flatMap((line) => [/^-A (CNI-\S+)/.exec(line)?.[1], / -j (CNI-\S+)/.exec(line)?.[1]]))].filter(
      (chain): chain is string => !!chain && !chain.startsWith('CNI-HOSTPORT-'),
    ),
  };
}

/** Everything of the node on the host now; each list is empty once nothing is left. */
function onHost(nodeDir: string, seen: Seen) {
  const socket = nodeContainerdSocket(nodeDir);
  const stateDir = dirname(socket);
  const ofContainer = (pid: string) => {
    const cgroups = readIfThere(`/proc/${pid}/cgroup`);
    return seen.containers.some((id) => cgroups.includes(id));
  };
  const mine = (text: string) => text.includes(stateDir) || text.includes(nodeDir);
  const links = lines('ip', ['-o', 'link', 'show']).map((line) => line.split(': ')[1]!.split('@')[0]!);
  const controllers = readdirSync('/sys/fs/cgroup');
  const cniResults = existsSync('/var/lib/cni/results') ? readdirSync('/var/lib/cni/results') : [];
  const ipam = join(nodeDir, 'cni', 'networks', BRIDGE);
  return {
    processes: pids()
      .filter((pid) => pid !== String(process.pid) && (mine(processArgs(pid)) || ofContainer(pid)))
      .map((pid) => `${pid} ${processArgs(pid)}`),
    containers: seen.containers.filter(
      (id) =>
        existsSync(join(stateDir, 'runc', 'k8s.io', id)) ||
        existsSync(join('/run/containerd/runc/k8s.io', id)) ||
        controllers.some((controller) => existsSync(join('/sys/fs/cgroup', controller, 'k8s.io', id))),
    ),
    shimSockets: seen.containers
      .map((id) => join('/run/containerd/s', createHash('sha256').update(`${socket}/k8s.io/${id}`).digest('hex')))
      .filter((path) => existsSync(path)),
    mounts: readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter(mine),
    links: links.filter((name) => name === BRIDGE || seen.veths.includes(name)),
    rules: lines('iptables-save', []).filter((line) => line.includes(`name: \\"${BRIDGE}\\"`) || seen.chains.some((chain) => line.includes(chain))),
    files: [
      ...(existsSync(stateDir) ? [stateDir] : []),
      ...cniResults.filter((name) => readIfThere(join('/var/lib/cni/results', name)).includes(stateDir)),
      ...(existsSync(ipam) ? readdirSync(ipam).filter((name) => /^\d+\.\d+\.\d+\.\d+$/.test(name)) : []),
      ...(existsSync(join(nodeDir, 'cni', 'results')) ? readdirSync(join(nodeDir, 'cni', 'results')) : []),
    ],
  };
}

const NOTHING = { processes: [], containers: [], shimSockets: [], mounts: [], links: [], rules: [], files: [] };

function exited(child: RunningSkiff): Promise<number | null> {
  const { process: proc } = child;
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
}

/** A cluster of the local preset with one pod running; answers what of it is on the host. */
async function startWithPod(dataDir: string, pod: string, configFile = 'skiff.config.mjs'): Promise<{ nodeDir: string; seen: Seen }> {
  dataDirs.push(dataDir);
  skiff = await startSkiff(['--data-dir', dataDir, '--config', join(project, configFile)], { cwd: project, timeoutMs: 60_000, detached: true });
  await ok('run', pod, '--image=skiff.local/busybox:1', '--image-pull-policy=Never', '--', 'sleep', '3600');
  await waitForPod(json, pod, podRunning, 'ran', WAIT);
  const nodeDir = nodeDirOf(dataDir);
  const seen = see(nodeDir);
  // The checks see the pod: its sandbox and container, its veth, its masquerade chain, its processes and mounts.
  expect(seen.containers.length).toBeGreaterThanOrEqual(2);
  expect(seen.veths).toHaveLength(1);
  expect(seen.chains.length).toBeGreaterThanOrEqual(1);
  const running = onHost(nodeDir, seen);
  for (const kind of ['processes', 'containers', 'mounts', 'links', 'rules', 'files'] as const) expect(running[kind], kind).not.toEqual([]);
  return { nodeDir, seen };
}

let removeRoutes: (() => void) | undefined;

beforeAll(async () => {
  if (notRoot) return;
  // Addresses of the service and pod ranges that nothing here serves fail at once instead of leaving the machine.
  removeRoutes = unreachableRoutes();
  const missing = missingPrerequisites();
  if (missing.length) throw new Error(`real containers need: ${missing.join('; ')} (bash scripts/install-system-deps.sh)`);
  await buildTestImages({ out: join(project, 'images') });
  writeFileSync(join(project, 'skiff.config.mjs'), config('containerd'));
  // containerd, until the test forbids it (then it cannot be started again) or slows it down (a longer start).
  writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      `[ -e ${JSON.stringify(refuse)} ] && { echo "containerd refused by the test" >&2; exit 1; }`,
      `[ -e ${JSON.stringify(slow)} ] && sleep 2`,
      'exec containerd "$@"',
      '',
    ].join('\n'),
  );
  chmodSync(wrapper, 0o755);
  writeFileSync(join(project, 'wrapped.config.mjs'), config(wrapper));
}, 60_000);

/** Stops the cluster a case left running (it failed before its stop), so that no two clusters share the bridge. */
async function stopLeftRunning(): Promise<void> {
  const proc = skiff?.process;
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGINT');
  await exited(skiff!);
}

afterEach(stopLeftRunning, 60_000);

afterAll(async () => {
  removeRoutes?.();
  await stopLeftRunning();
  // A case that failed midway may have left a node running (containerd outlives a second signal's exit): the
  // next start and stop of its data dir remove it, as they would for a user.
  for (const dataDir of dataDirs) {
    if (containerdPid(nodeDirOf(dataDir)) === undefined) continue;
    const next = await startSkiff(['--data-dir', dataDir], { cwd: project, timeoutMs: 60_000, detached: true }).catch(() => undefined);
    next?.process.kill('SIGINT');
    if (next) await exited(next);
  }
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
}, 300_000);

describe.skipIf(notRoot)('a clean stop of skiff up --preset local, however it is stopped', () => {
  it('Ctrl-C in a terminal (SIGINT to the whole process group) stops the pod before containerd', async () => {
    const { nodeDir, seen } = await startWithPod(join(project, 'group-sigint'), 'web');
    process.kill(-skiff!.process.pid!, 'SIGINT');
    expect(await exited(skiff!)).toBe(0);
    expect(onHost(nodeDir, seen)).toEqual(NOTHING);
  }, 120_000);

  it('SIGTERM to the skiff process alone', async () => {
    const { nodeDir, seen } = await startWithPod(join(project, 'sigterm'), 'web');
    skiff!.process.kill('SIGTERM');
    expect(await exited(skiff!)).toBe(0);
    expect(onHost(nodeDir, seen)).toEqual(NOTHING);
  }, 120_000);

  it('a service manager stopping the unit (SIGTERM to skiff and to containerd at once)', async () => {
    const { nodeDir, seen } = await startWithPod(join(project, 'unit-stop'), 'web');
    const containerd = containerdPid(nodeDir)!;
    skiff!.process.kill('SIGTERM');
    process.kill(containerd, 'SIGTERM');
    expect(await exited(skiff!)).toBe(0);
    expect(onHost(nodeDir, seen)).toEqual(NOTHING);
  }, 120_000);

  it('containerd killed with -9 is started again, and SIGTERM then stops everything', async () => {
    const { nodeDir, seen } = await startWithPod(join(project, 'containerd-killed'), 'web');
    const first = containerdPid(nodeDir)!;
    process.kill(first, 'SIGKILL');
    await waitFor('containerd to be started again', () => (containerdPid(nodeDir) ?? first) !== first, WAIT);
    // The restarted containerd took the pod's shim over: the pod keeps running and is still managed.
    expect((await json('get', 'pod', 'web')).status.phase).toBe('Running');
    skiff!.process.kill('SIGTERM');
    expect(await exited(skiff!)).toBe(0);
    expect(onHost(nodeDir, seen)).toEqual(NOTHING);
  }, 120_000);

  it('containerd killed and unable to start again: the stop removes the pod without it', async () => {
    const { nodeDir, seen } = await startWithPod(join(project, 'containerd-gone'), 'web', 'wrapped.config.mjs');
    writeFileSync(refuse, '');
    try {
      process.kill(containerdPid(nodeDir)!, 'SIGKILL');
      const output = () => skiff!.stdout() + skiff!.stderr();
      await waitFor('skiff to give containerd up', () => output().includes('containerd could not be started again'), WAIT);
      skiff!.process.kill('SIGTERM');
      expect(await exited(skiff!)).toBe(0);
    } finally {
      rmSync(refuse, { force: true });
    }
    expect(onHost(nodeDir, seen)).toEqual(NOTHING);
  }, 120_000);

  it('Ctrl-C while the cluster is starting stops it once started, containerd included', async () => {
    const dataDir = join(project, 'while-starting');
    dataDirs.push(dataDir);
    const nodeDir = nodeDirOf(dataDir);
    writeFileSync(slow, '');
    try {
      const starting = startSkiff(['--data-dir', dataDir, '--config', join(project, 'wrapped.config.mjs')], {
        cwd: project,
        timeoutMs: 60_000,
        detached: true,
      });
      // The wrapper waits before it starts containerd: the node is mid-start. Its parent is skiff, its group's leader.
      const waiting = await waitFor('containerd to be starting', () => pids().find((pid) => processArgs(pid).includes(`${wrapper} --config`)), WAIT);
      const skiffPid = Number(/^PPid:\s+(\d+)/m.exec(readIfThere(`/proc/${waiting}/status`))?.[1]);
      process.kill(-skiffPid, 'SIGINT');
      skiff = await starting;
    } finally {
      rmSync(slow, { force: true });
    }
    expect(await exited(skiff)).toBe(0);
    expect(skiff.stdout()).toContain('skiff: SIGINT while starting; stopping once started');
    expect(skiff.stdout()).toContain('skiff: stopped');
    expect(onHost(nodeDir, { containers: [], veths: [], chains: [] })).toEqual(NOTHING);
  }, 120_000);

  it('a second Ctrl-C during the stop exits at once; the next start takes the pod over and its stop leaves nothing', async () => {
    const dataDir = join(project, 'second-signal');
    const { nodeDir, seen } = await startWithPod(dataDir, 'web');
    const group = -skiff!.process.pid!;
    process.kill(group, 'SIGINT');
    await waitFor('the stop to begin', () => skiff!.stdout().includes('skiff: stopping'), WAIT);
    process.kill(group, 'SIGINT');
    expect(await exited(skiff!)).toBe(130);
    expect(skiff!.stderr()).toContain('SIGINT again, exiting now');

    skiff = await startSkiff(['--data-dir', dataDir], { cwd: project, timeoutMs: 60_000, detached: true });
    const runcRoot = join(dirname(nodeContainerdSocket(nodeDir)), 'runc', 'k8s.io');
    // Running under this start: the container the pod's status names is one runc runs now (the old one taken over, or a new one).
    await waitForPod(
      json,
      'web',
      (pod) => podRunning(pod) && existsSync(join(runcRoot, String(pod.status.containerStatuses[0].containerID).replace('containerd://', ''))),
      'run again',
      WAIT,
    );
    const again = see(nodeDir);
    process.kill(-skiff.process.pid!, 'SIGINT');
    expect(await exited(skiff)).toBe(0);
    const everything = {
      containers: [...new Set([...seen.containers, ...again.containers])],
      veths: [...new Set([...seen.veths, ...again.veths])],
      chains: [...new Set([...seen.chains, ...again.chains])],
    };
    expect(onHost(nodeDir, everything)).toEqual(NOTHING);
  }, 180_000);
});
