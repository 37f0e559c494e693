import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingLogger, type NetworkAttachment } from '@skiff/kernel';
import { toolPath } from './host.js';
import { sweepRules } from './iptables.js';
import { REQUIRED_PLUGINS } from './names.js';
import { BridgeNetwork } from './network.js';

const sh = promisify(execFile);
const BIN_DIR = '/usr/lib/cni';
// Apart from any running cluster (10.244.0.0/16, skiff<i>): node 0 of 10.250.0.0/16 on bridge skifft0.
const BRIDGE = 'skifft0';
const OPTIONS = {
  clusterCIDR: '10.250.0.0/16',
  nodeCIDRMaskSize: 24,
  binDir: BIN_DIR,
  bridgeName: 'skifft',
  hairpinMode: true,
  ipMasq: true,
  dns: { nameservers: ['10.96.0.10'], searches: ['svc.cluster.local'] },
};

function whyNotReal(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root (CNI plugins create interfaces)';
  const missing = REQUIRED_PLUGINS.filter((plugin) => !existsSync(join(BIN_DIR, plugin)));
  if (missing.length > 0) return `CNI plugins missing in ${BIN_DIR}: ${missing.join(', ')} (scripts/install-system-deps.sh)`;
  return undefined;
}

const skipReason = whyNotReal();
if (skipReason) console.warn(`[cni-bridge] real CNI tests skipped: ${skipReason}`);

const PATH = toolPath();
const run = (command: string, ...args: string[]) => sh(command, args, { env: { ...process.env, PATH } });
const tools = { save: 'iptables-save', restore: 'iptables-restore' };

/** A TCP server in the namespace that greets each connection with `greeting`. */
function listenIn(netns: string, port: number, greeting: string): ChildProcess {
  const script = `require('net').createServer((s) => s.end(${JSON.stringify(greeting)})).listen(${port}, '0.0.0.0')`;
  return spawn('ip', ['netns', 'exec', netns, process.execPath, '-e', script], { stdio: 'ignore', env: { ...process.env, PATH } });
}

function readFrom(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, timeout: 2000 });
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('end', () => resolve(text));
    socket.on('timeout', () => socket.destroy(new Error(`timeout connecting to ${host}:${port}`)));
    socket.on('error', reject);
  });
}

async function eventuallyReadFrom(host: string, port: number): Promise<string> {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      return await readFrom(host, port);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const ipOf = (address: string) => address.split('/')[0]!;

describe.skipIf(skipReason !== undefined)('the bridge network with the real CNI plugins', () => {
  const suffix = randomBytes(3).toString('hex');
  const namespaces: string[] = [];
  const listeners: ChildProcess[] = [];
  let dataDir: string;
  let network: BridgeNetwork;

  async function sandbox(name: string): Promise<NetworkAttachment> {
    const netns = `skiff-test-${suffix}-${name}`;
    await run('ip', 'netns', 'add', netns);
    namespaces.push(netns);
    return {
      containerId: `${suffix}${name}`,
      netnsPath: `/var/run/netns/${netns}`,
      ifName: 'eth0',
      podName: name,
      podNamespace: 'test',
      podUid: `uid-${name}`,
    };
  }
  const netnsName = (attachment: NetworkAttachment) => attachment.netnsPath.split('/').at(-1)!;
  const allocations = async () => (await readdir(join(dataDir, 'cni', 'networks', BRIDGE)).catch(() => [] as string[])).filter((f) => /^\d/.test(f));
  const natRulesOf = async (containerId: string) =>
    (await run('iptables-save', '-t', 'nat')).stdout.split('\n').filter((line) => line.includes(`id: \\"${containerId}\\"`));
  const linkExists = (name: string) =>
    run('ip', 'link', 'show', name).then(
      () => true,
      () => false,
    );

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'skiff-cni-real-'));
    network = await BridgeNetwork.create({ nodeName: 'node-1', index: 0, dataDir, logger: recordingLogger() }, OPTIONS);
  });

  afterAll(async () => {
    for (const listener of listeners) listener.kill();
    for (const netns of namespaces) await run('ip', 'netns', 'del', netns).catch(() => undefined);
    // Whatever a failed test left: the bridge and its rules go even if close() was never reached.
    await run('ip', 'link', 'del', BRIDGE).catch(() => undefined);
    await sweepRules(tools, BRIDGE).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('writes its configuration under the node dataDir and turns forwarding on', async () => {
    expect(network.podCIDR()).toBe('10.250.1.0/24');
    const conflist = JSON.parse(await readFile(join(dataDir, 'cni', 'net.d', `10-${BRIDGE}.conflist`), 'utf8'));
    expect(conflist.plugins.map((p: { type: string }) => p.type)).toEqual(['bridge', 'portmap']);
    expect((await readFile('/proc/sys/net/ipv4/ip_forward', 'utf8')).trim()).toBe('1');
  });

  it('ADD puts an address on eth0 and brings lo up; the host reaches a server in the pod; CHECK passes; DEL removes everything', async () => {
    const pod = await sandbox('a');
    const result = await network.add(pod);
    expect(result.ips).toHaveLength(1);
    expect(result.ips[0]!.address).toMatch(/^10\.250\.1\.\d+\/24$/);
    expect(result.ips[0]!.gateway).toBe('10.250.1.1');
    expect(result.dns).toEqual({ nameservers: ['10.96.0.10'], search: ['svc.cluster.local'] });
    const ip = ipOf(result.ips[0]!.address);
    expect((await run('ip', 'netns', 'exec', netnsName(pod), 'ip', '-4', 'addr', 'show', 'eth0')).stdout).toContain(`inet ${result.ips[0]!.address}`);
    expect((await run('ip', 'netns', 'exec', netnsName(pod), 'ip', 'link', 'show', 'lo')).stdout).toMatch(/state UNKNOWN|,UP/);
    expect((await run('ip', 'netns', 'exec', netnsName(pod), 'ip', 'route')).stdout).toContain('default via 10.250.1.1 dev eth0');
    expect(await allocations()).toEqual([ip]);

    listeners.push(listenIn(netnsName(pod), 8080, 'hello from pod a'));
    expect(await eventuallyReadFrom(ip, 8080)).toBe('hello from pod a');

    await network.check(pod);
    // ADD again (a restarted kubelet asks) answers the same attachment.
    expect(await network.add(pod)).toEqual(result);

    const hostVeth = result.interfaces!.find((i) => i.name !== BRIDGE && !i.sandbox)!.name;
    expect(await linkExists(hostVeth)).toBe(true);
    expect(await natRulesOf(pod.containerId)).not.toEqual([]);
    await network.del(pod);
    expect(await allocations()).toEqual([]);
    expect(await linkExists(hostVeth)).toBe(false);
    expect(await natRulesOf(pod.containerId)).toEqual([]);
    await expect(network.check(pod)).rejects.toMatchObject({ code: 'SKIFF_ERR_CNI_NOT_ATTACHED' });
    // DEL is idempotent.
    await network.del(pod);
  });

  it('maps a host port to the pod (portmap), on the host address and on 127.0.0.1', async () => {
    const pod = await sandbox('b');
    const hostPort = 20000 + Math.floor(Math.random() * 20000);
    const result = await network.add({ ...pod, portMappings: [{ protocol: 'TCP', containerPort: 8080, hostPort }] });
    listeners.push(listenIn(netnsName(pod), 8080, 'hello via hostPort'));
    await eventuallyReadFrom(ipOf(result.ips[0]!.address), 8080);
    expect(await readFrom('127.0.0.1', hostPort)).toBe('hello via hostPort');
    expect((await natRulesOf(pod.containerId)).some((rule) => rule.includes(`--dports ${hostPort}`))).toBe(true);
    await network.del(pod);
    expect(await natRulesOf(pod.containerId)).toEqual([]);
    await expect(readFrom('127.0.0.1', hostPort)).rejects.toThrow();
  });

  it('DEL after the namespace is gone still frees the address and removes the masquerade rules', async () => {
    const pod = await sandbox('c');
    await network.add(pod);
    await run('ip', 'netns', 'del', netnsName(pod));
    await network.del(pod);
    expect(await allocations()).toEqual([]);
    expect(await natRulesOf(pod.containerId)).toEqual([]);
  });

  it('honours the preferred address when it is free', async () => {
    const pod = await sandbox('d');
    const result = await network.add({ ...pod, preferredIP: '10.250.1.77' });
    expect(result.ips[0]!.address).toBe('10.250.1.77/24');
    await network.del(pod);
  });

  it('a failed ADD names the plugin and leaves nothing behind', async () => {
    const pod = { ...(await sandbox('e')), netnsPath: `/var/run/netns/skiff-test-${suffix}-missing` };
    await expect(network.add(pod)).rejects.toMatchObject({
      code: 'SKIFF_ERR_CNI_PLUGIN_FAILED',
      message: expect.stringMatching(/^CNI plugin loopback failed \(ADD\)/),
    });
    expect(await allocations()).toEqual([]);
    expect(await readdir(join(dataDir, 'cni', 'results'))).toEqual([]);
  });

  it('attaches pods concurrently; ADD and DEL take milliseconds', async () => {
    const pods = await Promise.all(['p0', 'p1', 'p2', 'p3'].map((name) => sandbox(name)));
    const addStarted = performance.now();
    const results = await Promise.all(pods.map((pod) => network.add(pod)));
    const addMs = performance.now() - addStarted;
    expect(new Set(results.map((r) => r.ips[0]!.address)).size).toBe(4);
    // Pods on one bridge reach each other.
    listeners.push(listenIn(netnsName(pods[0]!), 9090, 'pod to pod'));
    await eventuallyReadFrom(ipOf(results[0]!.ips[0]!.address), 9090);
    const fromPod = `require('net').connect(9090, ${JSON.stringify(ipOf(results[0]!.ips[0]!.address))}).on('data', (d) => process.stdout.write(d))`;
    expect((await run('ip', 'netns', 'exec', netnsName(pods[1]!), process.execPath, '-e', fromPod)).stdout).toBe('pod to pod');

    const delStarted = performance.now();
    await Promise.all(pods.map((pod) => network.del(pod)));
    const delMs = performance.now() - delStarted;

    const serial = { add: [] as number[], del: [] as number[] };
    for (let i = 0; i < 5; i++) {
      let started = performance.now();
      await network.add(pods[0]!);
      serial.add.push(performance.now() - started);
      started = performance.now();
      await network.del(pods[0]!);
      serial.del.push(performance.now() - started);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(0);
    console.info(
      `[cni-bridge] 4 concurrent ADDs ${addMs.toFixed(0)} ms, 4 concurrent DELs ${delMs.toFixed(0)} ms; one pod: ADD median ${median(serial.add)} ms, DEL median ${median(serial.del)} ms`,
    );
    expect(await allocations()).toEqual([]);
  });

  it('releases attachments whose namespace is gone (the runtime died first) at the next start and at close; live ones stay', async () => {
    const gone = await sandbox('g');
    const alive = await sandbox('h');
    await network.add(gone);
    await network.add(alive);
    await run('ip', 'netns', 'del', netnsName(gone));
    // The node's next start, on the same data dir.
    network = await BridgeNetwork.create({ nodeName: 'node-1', index: 0, dataDir, logger: recordingLogger() }, OPTIONS);
    expect(await allocations()).toHaveLength(1);
    expect(await natRulesOf(gone.containerId)).toEqual([]);
    expect(await natRulesOf(alive.containerId)).not.toEqual([]);
    await run('ip', 'netns', 'del', netnsName(alive));
    await network.close();
    expect(await allocations()).toEqual([]);
    expect(await readdir(join(dataDir, 'cni', 'results'))).toEqual([]);
    expect(await linkExists(BRIDGE)).toBe(false);
    expect((await run('iptables-save')).stdout).not.toContain(`name: \\"${BRIDGE}\\"`);
  });

  it('close() keeps the bridge while a pod is attached, and removes it and its rules once none is', async () => {
    const pod = await sandbox('z');
    await network.add(pod);
    await network.close();
    expect(await linkExists(BRIDGE)).toBe(true);
    await network.del(pod);
    await network.close();
    expect(await linkExists(BRIDGE)).toBe(false);
    expect((await run('iptables-save')).stdout).not.toContain(`name: \\"${BRIDGE}\\"`);
  });
});
