// A control plane that survives a machine: three etcd members (Debian's etcd, real processes on loopback ports),
// two API servers on the HA preset (`skiff apiserver`, at 127.0.0.2 and 127.0.0.3), two controller managers and two
// schedulers (`skiff controller-manager|scheduler --server A,B`, leader election on), and one node (`skiff join A,B`)
// whose kubelet fails over between the API servers. Each part is its own process; the test kills them with SIGKILL.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESOURCES, type Endpoints, type KubeObject, type Lease, type Pod } from '@skiff/api';
import { createClientFromKubeconfig, type SkiffClient } from '@skiff/client';
import { waitFor } from '@skiff/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdCluster } from '@skiff/plugin-store-etcd/testing';

const SKIFF_BIN = fileURLToPath(new URL('../core/cli/bin/skiff.js', import.meta.url));
const HOSTS = ['127.0.0.2', '127.0.0.3'] as const;

interface Proc {
  name: string;
  child: ChildProcess;
  output(): string;
}

const procs: Proc[] = [];
let root: string;
let etcd: EtcdCluster;
let port: number;
let servers: string;
let configFile: string;
const dataDirs: string[] = [];
let clientA: SkiffClient;
let clientB: SkiffClient;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '0.0.0.0', () => {
      const { port: found } = server.address() as { port: number };
      server.close(() => resolve(found));
    });
  });
}

/** Starts `skiff <args>` and waits for its ready line. */
async function skiff(name: string, args: string[], ready: RegExp, timeoutMs = 120_000): Promise<Proc> {
  const child = spawn(process.execPath, [SKIFF_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], cwd: root });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const proc = { name, child, output: () => output };
  procs.push(proc);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready after ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const check = () => {
      if (!ready.test(output)) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      resolve();
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output}`));
    });
  });
  return proc;
}

async function kill9(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.child.once('exit', resolve));
  proc.child.kill('SIGKILL');
  await exited;
}

function proc(name: string): Proc {
  return procs.find((p) => p.name === name)!;
}

async function lease(client: SkiffClient, name: string): Promise<Lease> {
  return client.get<Lease>(RESOURCES.leases, name, 'kube-system');
}

/** Which of the candidates holds a lease: the one whose log lines carry the holder as their own identity. */
function isCandidate(name: string, identity: string): boolean {
  return proc(name).output().includes(`"identity":"${identity}"`);
}

function holderOf(holder: string, candidates: string[]): string {
  const found = candidates.filter((name) => isCandidate(name, holder));
  if (found.length !== 1) throw new Error(`the lease holder ${holder} is in the output of ${found.length} candidates`);
  return found[0]!;
}

async function pods(client: SkiffClient, namespace: string, selector: string): Promise<Pod[]> {
  return (await client.list<Pod>(RESOURCES.pods, namespace, { labelSelector: selector })).items;
}

function kubectl(kubeconfig: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'skiff-ha-'));
  etcd = await EtcdCluster.start(3);
  port = await freePort();
  servers = HOSTS.map((host) => `https://${host}:${port}`).join(',');
  configFile = join(root, 'skiff.config.json');
  writeFileSync(configFile, JSON.stringify({ preset: 'ha', plugins: [['@skiff/plugin-store-etcd', { endpoints: etcd.endpoints, retryForMs: 20_000 }]] }));
  for (const host of HOSTS) dataDirs.push(join(root, host));
  const common = ['--config', configFile, '--log-level', 'info'];
  const apiArgs = (i: number) => [
    'apiserver',
    ...common,
    '--data-dir',
    dataDirs[i]!,
    '--host',
    HOSTS[i]!,
    '--advertise-address',
    HOSTS[i]!,
    '--port',
    String(port),
  ];
  await skiff('apiserver-a', apiArgs(0), /^ready: API server/m);
  // The second API server starts on a copy of the first one's CA and encryption key.
  mkdirSync(dataDirs[1]!, { recursive: true, mode: 0o700 });
  cpSync(join(dataDirs[0]!, 'pki'), join(dataDirs[1]!, 'pki'), { recursive: true });
  cpSync(join(dataDirs[0]!, 'encryption-config.yaml'), join(dataDirs[1]!, 'encryption-config.yaml'));
  await skiff('apiserver-b', apiArgs(1), /^ready: API server/m);
  clientA = createClientFromKubeconfig(join(dataDirs[0]!, 'admin.kubeconfig'));
  clientB = createClientFromKubeconfig(join(dataDirs[1]!, 'admin.kubeconfig'));
  for (const [i, component] of [
    [0, 'controller-manager'],
    [1, 'controller-manager'],
    [0, 'scheduler'],
    [1, 'scheduler'],
  ] as const)
    await skiff(`${component}-${'ab'[i]}`, [component, ...common, '--data-dir', dataDirs[i]!, '--server', servers], new RegExp(`^ready: ${component}`, 'm'));
  // The node: credentials of its own (system:node:ha-node), then `skiff join` with both API servers.
  const nodeDir = join(root, 'node');
  mkdirSync(nodeDir, { recursive: true, mode: 0o700 });
  const kubeconfig = spawnSync(
    process.execPath,
    [
      SKIFF_BIN,
      'kubeconfig',
      'user',
      '--name',
      'system:node:ha-node',
      '--group',
      'system:nodes',
      '--data-dir',
      dataDirs[0]!,
      '--server',
      `https://${HOSTS[0]}:${port}`,
    ],
    { encoding: 'utf8', cwd: root },
  );
  if (kubeconfig.status !== 0) throw new Error(`skiff kubeconfig user: ${kubeconfig.stderr}`);
  writeFileSync(join(nodeDir, 'kubelet.kubeconfig'), kubeconfig.stdout, { mode: 0o600 });
  await skiff(
    'node',
    ['join', servers, '--preset', 'dev', '--data-dir', nodeDir, '--node-name', 'ha-node', '--node-ip', '127.0.0.1', '--log-level', 'info'],
    /^ready: node/m,
  );
}, 300_000);

afterAll(async () => {
  await Promise.all(
    procs.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGINT');
        }),
    ),
  );
  await etcd?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
}, 60_000);

describe('a highly available control plane on etcd', () => {
  it('shows a write through API server A, in order, to a watch on API server B', async () => {
    const namespace = 'ha-watch';
    await clientA.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, undefined);
    const list = await clientB.list(RESOURCES.configmaps, namespace);
    const seen: { name: string; rv: number }[] = [];
    const abort = new AbortController();
    const watching = (async () => {
      for await (const event of clientB.watch(RESOURCES.configmaps, namespace, { resourceVersion: list.metadata.resourceVersion, signal: abort.signal })) {
        if (event.type !== 'ADDED') continue;
        const object = event.object as KubeObject;
        // The root CA publisher writes kube-root-ca.crt into the new namespace too, sometimes after the list.
        if (!object.metadata.name?.startsWith('cm-')) continue;
        seen.push({ name: object.metadata.name!, rv: Number(object.metadata.resourceVersion) });
        if (seen.length === 30) break;
      }
    })();
    const written: string[] = [];
    for (let i = 0; i < 30; i++) {
      const name = `cm-${String(i).padStart(2, '0')}`;
      await clientA.create(RESOURCES.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { i: String(i) } }, namespace);
      written.push(name);
    }
    await watching;
    abort.abort();
    expect(seen.map((event) => event.name)).toEqual(written);
    expect(seen.every((event, i) => i === 0 || event.rv > seen[i - 1]!.rv)).toBe(true);
  }, 60_000);

  it('lists both API servers in the kubernetes endpoints, and runs a Deployment on the joined node', async () => {
    await waitFor(
      'both API servers in the kubernetes endpoints',
      async () => {
        const endpoints = await clientB.get<Endpoints>(RESOURCES.endpoints, 'kubernetes', 'default');
        return (endpoints.subsets?.[0]?.addresses ?? []).map((a) => a.ip).join(',') === HOSTS.join(',');
      },
      { timeoutMs: 30_000 },
    );
    await clientA.create(
      RESOURCES.deployments,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
        },
      },
      'default',
    );
    await waitFor(
      'two running pods of the Deployment',
      async () => (await pods(clientB, 'default', 'app=web')).filter((pod) => pod.status?.phase === 'Running' && pod.spec?.nodeName === 'ha-node').length === 2,
      { timeoutMs: 60_000 },
    );
  }, 120_000);

  it('hands the controller manager lease to the other copy when the leader is killed, and a scale made meanwhile is reconciled', async () => {
    const before = await lease(clientA, 'kube-controller-manager');
    const leader = holderOf(before.spec!.holderIdentity!, ['controller-manager-a', 'controller-manager-b']);
    const other = leader === 'controller-manager-a' ? 'controller-manager-b' : 'controller-manager-a';
    const killedAt = Date.now();
    await kill9(proc(leader));
    await clientB.patch(RESOURCES.deployments, 'web', { spec: { replicas: 4 } }, { namespace: 'default', patchType: 'merge' });
    let takeoverSeconds = 0;
    await waitFor(
      'the other controller manager to hold the lease',
      async () => {
        const holder = (await lease(clientB, 'kube-controller-manager')).spec?.holderIdentity;
        if (!holder || holder === before.spec!.holderIdentity || !isCandidate(other, holder)) return false;
        takeoverSeconds = (Date.now() - killedAt) / 1000;
        return true;
      },
      { timeoutMs: 45_000, intervalMs: 250 },
    );
    console.log(`controller manager lease taken over ${takeoverSeconds.toFixed(1)} s after SIGKILL of the leader`);
    // Upstream's defaults: 15 s lease, 2 s retry — the new leader acts within 20 s (a little more on a loaded machine).
    expect(takeoverSeconds).toBeLessThan(30);
    await waitFor(
      'four running pods after the scale',
      async () => (await pods(clientB, 'default', 'app=web')).filter((pod) => pod.status?.phase === 'Running').length === 4,
      { timeoutMs: 60_000 },
    );
  }, 150_000);

  it('loses no acknowledged write when an etcd member is killed with SIGKILL during writes', async () => {
    const namespace = 'ha-writes';
    await clientA.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, undefined);
    const acknowledged: string[] = [];
    let stop = false;
    const writer = async (client: SkiffClient, id: string) => {
      for (let i = 0; !stop; i++) {
        const name = `${id}-${i}`;
        try {
          await client.create(RESOURCES.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } }, namespace);
          acknowledged.push(name);
        } catch {
          // not acknowledged: it may or may not be there
        }
      }
    };
    const writers = [writer(clientA, 'a1'), writer(clientA, 'a2'), writer(clientB, 'b1'), writer(clientB, 'b2')];
    await waitFor('100 acknowledged writes', () => acknowledged.length >= 100, { timeoutMs: 60_000, intervalMs: 20 });
    const member = await etcd.leader();
    await etcd.kill(member);
    const atKill = acknowledged.length;
    await waitFor('100 more acknowledged writes', () => acknowledged.length >= atKill + 100, { timeoutMs: 60_000, intervalMs: 20 });
    stop = true;
    await Promise.all(writers);
    const stored = new Set((await clientB.list(RESOURCES.configmaps, namespace)).items.map((item) => item.metadata.name));
    expect(acknowledged.filter((name) => !stored.has(name))).toEqual([]);
    await etcd.restart(member);
  }, 150_000);

  it('keeps kubectl working through API server B when A is killed, and drops A from the kubernetes endpoints', async () => {
    await kill9(proc('apiserver-a'));
    const kubeconfigB = join(dataDirs[1]!, 'admin.kubeconfig');
    const created = kubectl(kubeconfigB, 'create', 'configmap', 'after-a', '--from-literal=k=v');
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    expect(kubectl(kubeconfigB, 'get', 'configmap', 'after-a', '-o', 'jsonpath={.data.k}').stdout).toBe('v');
    await waitFor(
      'the kubernetes endpoints to list only B',
      async () => {
        const endpoints = await clientB.get<Endpoints>(RESOURCES.endpoints, 'kubernetes', 'default');
        return (endpoints.subsets?.[0]?.addresses ?? []).map((a) => a.ip).join(',') === HOSTS[1];
      },
      { timeoutMs: 45_000 },
    );
    // The node and the components fail over to B: a new pod is scheduled, started and reported through B.
    const run = kubectl(kubeconfigB, 'run', 'after-a', '--image=nginx');
    expect(run.status).toBe(0);
    await waitFor(
      'the new pod to run on the node',
      async () => {
        const pod = await clientB.get<Pod>(RESOURCES.pods, 'after-a', 'default');
        return pod.status?.phase === 'Running' && pod.spec?.nodeName === 'ha-node';
      },
      { timeoutMs: 60_000 },
    );
    const nodes = kubectl(kubeconfigB, 'get', 'node', 'ha-node', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}');
    expect(nodes.stdout).toBe('True');
  }, 150_000);
});
