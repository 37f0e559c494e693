import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions, podRunning, waitForPod } from './clients.js';
import { REPO_ROOT, tempDir, waitFor } from './harness.js';
import { buildTestImages, missingPrerequisites } from '../scripts/test-images.mjs';
import { down, hostAddress, hostName, inHostCommand, startNode, up, waitForHostLine } from '../scripts/hosts.mjs';
import { freePort } from '../scripts/free-port.mjs';

// Four "machines" on this box (network namespaces on bridges, scripts/hosts.mjs): a control plane with the
// standard chain (Node authorizer, RBAC, NodeRestriction) on host 0, and three nodes that join it over the network
// with a bootstrap token (`skiff join --preset local`: containerd, the CNI bridge, nftables). Hosts 0–2 share a
// network (host-gateway routes between nodes); host 3 is on another one, routed through this namespace, so its pods
// are reached through the VXLAN overlay. Traffic goes only to
// addresses of these namespaces; the pod and Service ranges are unreachable in every host's table but for the
// nodes' own routes. Root only, like every real-container test.

const notRoot = process.getuid?.() !== 0;
if (notRoot) console.log('multi-host.test.ts skipped: network namespaces and real containers need root');

const dir = tempDir('hosts');
const cacheDir = tempDir('hosts-cache');
const WAIT = { timeoutMs: 90_000, intervalMs: 250 };
const kubectlVersionsUsed = kubectlVersions().filter((v) => v.minor === 27 || v.minor === 36);
const kubectl136 = kubectlVersionsUsed.find((v) => v.minor === 36)!;
let kubeconfig = '';
const { ok, json, apply, kubectl } = kubectlOn(kubectl136.path, () => kubeconfig, cacheDir);
const SKIFF = join(REPO_ROOT, 'core/cli/bin/skiff.js');
let hostsStarted = false;

/** A node's own credentials, as `skiff join` wrote them. */
const nodeKubeconfig = (index: number) => join(dir, hostName(index), 'kubelet.kubeconfig');

function pidOfNode(index: number): number {
  const pids = readFileSync(join(dir, 'pids'), 'utf8').split('\n').filter(Boolean).map(Number);
  return pids[index]!;
}

beforeAll(async () => {
  if (notRoot) return;
  const missing = missingPrerequisites();
  if (missing.length) throw new Error(`real containers need: ${missing.join('; ')} (bash scripts/install-system-deps.sh)`);
  const images = await buildTestImages({ out: join(dir, 'images') });
  hostsStarted = true;
  ({ kubeconfig } = await up({ hosts: 4, preset: 'local', controlPreset: 'standard', routed: [3], dir }));
  // No registry is reachable from the hosts: the images go straight into each node's containerd.
  for (const index of [1, 2, 3]) {
    execFileSync(
      process.execPath,
      [SKIFF, 'image', 'import', images.images.busybox.archive, images.images.curl.archive, '--data-dir', join(dir, hostName(index))],
      {
        stdio: 'pipe',
      },
    );
  }
}, 300_000);

afterAll(async () => {
  if (hostsStarted) await down({ dir });
  rmSync(dir, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
}, 120_000);

const WEB = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]
      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [host-1, host-2]}]}]}}}
      containers:
      - name: web
        image: skiff.local/busybox:1
        imagePullPolicy: Never
        command: [sh, -c, 'echo "hello from $(hostname)" > /www/index.html; echo serving; exec httpd -f -p 8080 -h /www']
        ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeName: host-1
  containers:
  - name: c
    image: skiff.local/curl:1
    imagePullPolicy: Never
    command: [sleep, "3600"]
`;

describe.skipIf(notRoot)('a control plane and three nodes on other hosts', () => {
  it('every node joined with the token: their CSRs are Approved,Issued and they are Ready with their own InternalIPs', async () => {
    const csrs = await json('get', 'csr');
    const clients = csrs.items.filter((csr: any) => csr.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet');
    const serving = csrs.items.filter((csr: any) => csr.spec.signerName === 'kubernetes.io/kubelet-serving');
    expect(clients).toHaveLength(3);
    expect(serving.map((csr: any) => csr.spec.username).sort()).toEqual(['system:node:host-1', 'system:node:host-2', 'system:node:host-3']);
    for (const csr of [...clients, ...serving]) {
      expect(csr.status.conditions.map((c: any) => c.type)).toEqual(['Approved']);
      expect(csr.status.certificate).toBeTruthy();
    }
    expect(clients.every((csr: any) => csr.spec.username.startsWith('system:bootstrap:'))).toBe(true);
    expect((await ok('get', 'csr')).split('\n').filter((line) => line.includes('Approved,Issued'))).toHaveLength(6);

    const nodes = await json('get', 'nodes');
    const byName = Object.fromEntries(nodes.items.map((node: any) => [node.metadata.name, node]));
    expect(Object.keys(byName).sort()).toEqual(['host-1', 'host-2', 'host-3']);
    for (const index of [1, 2, 3]) {
      const node = byName[`host-${index}`];
      expect(node.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
      expect(node.status.addresses.find((a: any) => a.type === 'InternalIP').address).toBe(hostAddress(index, index === 3 ? 1 : 0));
      expect(node.status.daemonEndpoints.kubeletEndpoint.Port).toBe(10250);
      expect(node.spec.podCIDR).toMatch(/^10\.244\.\d+\.0\/24$/);
    }
    expect(new Set(Object.values(byName).map((node: any) => node.spec.podCIDR)).size).toBe(3);
  });

  it('a pod on each host reaches the other by IP and through the Service by name, and the API server through kubernetes.default', async () => {
    await apply(WEB);
    await waitForPod(json, 'client', podRunning, 'started', WAIT);
    const pods = await waitFor(
      'a web pod running on each host',
      async () => {
        const list = (await json('get', 'pods', '-l', 'app=web')).items.filter(podRunning);
        return list.length === 2 && new Set(list.map((pod: any) => pod.spec.nodeName)).size === 2 && list;
      },
      WAIT,
    );
    const remote = pods.find((pod: any) => pod.spec.nodeName === 'host-2');
    expect(await ok('exec', 'client', '--', 'curl', '-s', '-m', '5', `http://${remote.status.podIP}:8080/`)).toBe(`hello from ${remote.metadata.name}\n`);
    // Both endpoints answer through the Service, found by its name through the cluster DNS on host 0.
    const answers = new Set<string>();
    await waitFor(
      'both web pods to answer through the Service',
      async () => {
        answers.add(await ok('exec', 'client', '--', 'curl', '-s', '-m', '5', 'http://web.default.svc.cluster.local/'));
        return answers.size === 2;
      },
      WAIT,
    );
    expect([...answers].sort()).toEqual(pods.map((pod: any) => `hello from ${pod.metadata.name}\n`).sort());
    // The API server on host 0, through the kubernetes Service, with the CA every pod gets.
    expect(
      await ok(
        'exec',
        'client',
        '--',
        'curl',
        '-s',
        '-m',
        '5',
        '--cacert',
        '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
        'https://kubernetes.default.svc/healthz',
      ),
    ).toBe('ok');
  });

  it('a pod on a host of another network is reached through the VXLAN overlay, and reaches back', async () => {
    await apply(`apiVersion: v1
kind: Pod
metadata: {name: far}
spec:
  nodeName: host-3
  containers:
  - {name: web, image: skiff.local/curl:1, imagePullPolicy: Never, command: [sh, -c, 'echo far > /www/index.html; exec httpd -f -p 8080 -h /www']}
`);
    const far = await waitForPod(json, 'far', podRunning, 'started', WAIT);
    expect(await ok('exec', 'client', '--', 'curl', '-s', '-m', '5', `http://${far.status.podIP}:8080/`)).toBe('far\n');
    // And back: from host 3 to a web pod on the first network, by its address.
    const web = (await json('get', 'pods', '-l', 'app=web')).items[0];
    expect(await ok('exec', 'far', '--', 'curl', '-s', '-m', '5', `http://${web.status.podIP}:8080/`)).toBe(`hello from ${web.metadata.name}\n`);
    const farRange = (await json('get', 'node', 'host-3')).spec.podCIDR;
    const [command, ...args] = inHostCommand(1, ['ip', 'route', 'show', farRange]);
    expect(execFileSync(command!, args).toString()).toContain('dev skiff-vxlan');
  });

  it('kubectl logs, exec, cp and port-forward reach a pod on the second host, with kubectl 1.27 and 1.36', async () => {
    const remote = (await json('get', 'pods', '-l', 'app=web')).items.find((pod: any) => pod.spec.nodeName === 'host-2');
    const name = remote.metadata.name;
    for (const { minor, path } of kubectlVersionsUsed) {
      const versioned = kubectlOn(path, () => kubeconfig, join(cacheDir, `v${minor}`));
      expect({ minor, logs: await versioned.ok('logs', name) }).toEqual({ minor, logs: 'serving\n' });
      expect({ minor, exec: await versioned.ok('exec', name, '--', 'cat', '/etc/hostname') }).toEqual({ minor, exec: `${name}\n` });
      const failing = await versioned.kubectl(['exec', name, '--', 'sh', '-c', 'exit 3']);
      expect({ minor, code: failing.code }).toEqual({ minor, code: 3 });
      const local = join(dir, `cp-${minor}.txt`);
      writeFileSync(local, `kubectl 1.${minor} crossed hosts\n`);
      await versioned.ok('cp', local, `${name}:/tmp/cp.txt`);
      await versioned.ok('cp', `${name}:/tmp/cp.txt`, `${local}.back`);
      expect(readFileSync(`${local}.back`, 'utf8')).toBe(`kubectl 1.${minor} crossed hosts\n`);

      const port = await freePort();
      const forward = spawn(path, ['--kubeconfig', kubeconfig, '--cache-dir', join(cacheDir, `pf-${minor}`), 'port-forward', `pod/${name}`, `${port}:8080`], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let said = '';
      forward.stdout!.on('data', (d: Buffer) => (said += d.toString()));
      forward.stderr!.on('data', (d: Buffer) => (said += d.toString()));
      try {
        await waitFor(`kubectl 1.${minor} port-forward to listen (it said: ${said})`, () => said.includes('Forwarding from 127.0.0.1'), WAIT);
        expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe(`hello from ${name}\n`);
      } finally {
        forward.kill('SIGINT');
      }
    }
  });

  it("one node's credentials cannot read a Secret that only the other node's pods use", async () => {
    await apply(`apiVersion: v1
kind: Secret
metadata: {name: only-host-2}
stringData: {word: swordfish}
---
apiVersion: v1
kind: Pod
metadata: {name: secret-user}
spec:
  nodeName: host-2
  containers:
  - name: c
    image: skiff.local/busybox:1
    imagePullPolicy: Never
    command: [sh, -c, 'cat /secret/word; echo; sleep 3600']
    volumeMounts: [{name: s, mountPath: /secret}]
  volumes: [{name: s, secret: {secretName: only-host-2}}]
`);
    await waitForPod(json, 'secret-user', podRunning, 'started', WAIT);
    await waitFor('the pod to print the secret', async () => (await ok('logs', 'secret-user')) === 'swordfish\n', WAIT);
    const asNode = (index: number) => kubectlOn(kubectl136.path, () => nodeKubeconfig(index), join(cacheDir, `node-${index}`));
    const refused = await asNode(1).kubectl(['get', 'secret', 'only-host-2', '-o', 'name']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/forbidden: User "system:node:host-1" cannot get resource "secrets"/);
    expect(await asNode(2).ok('get', 'secret', 'only-host-2', '-o', 'name')).toBe('secret/only-host-2\n');
  });

  it('kill -9 of the second node: NotReady, unreachable taint, its pods evicted to another; restarted, it is Ready and its old pods are gone', async () => {
    await apply(`apiVersion: apps/v1
kind: Deployment
metadata: {name: mover}
spec:
  replicas: 1
  selector: {matchLabels: {app: mover}}
  template:
    metadata: {labels: {app: mover}}
    spec:
      affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference: {matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [host-2]}]}}]}}
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      containers:
      - {name: c, image: skiff.local/busybox:1, imagePullPolicy: Never, command: [sleep, '3600']}
`);
    const first = await waitFor(
      'the mover pod running on host-2',
      async () => (await json('get', 'pods', '-l', 'app=mover')).items.find((pod: any) => podRunning(pod) && pod.spec.nodeName === 'host-2'),
      WAIT,
    );

    const killedAt = Date.now();
    process.kill(pidOfNode(2), 'SIGKILL');
    const notReady = await waitFor(
      'host-2 to become NotReady with the unreachable taint',
      async () => {
        const node = await json('get', 'node', 'host-2');
        const ready = node.status.conditions.find((c: any) => c.type === 'Ready');
        const taints = (node.spec.taints ?? []).map((t: any) => `${t.key}:${t.effect}`);
        return ready.status === 'Unknown' && taints.includes('node.kubernetes.io/unreachable:NoExecute') && taints;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(notReady).toContain('node.kubernetes.io/unreachable:NoSchedule');
    // The node lifecycle controller's grace period (40 s) and monitor period (5 s) bound how long that takes.
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    await waitFor(
      'a new mover pod running on another node',
      async () =>
        (await json('get', 'pods', '-l', 'app=mover')).items.find(
          (pod: any) => podRunning(pod) && pod.spec.nodeName !== 'host-2' && !pod.metadata.deletionTimestamp,
        ),
      WAIT,
    );

    const logFile = join(dir, `${hostName(2)}.log`);
    const restarted: ChildProcess = startNode(dir, 2);
    const pids = readFileSync(join(dir, 'pids'), 'utf8').split('\n').filter(Boolean);
    pids[2] = String(restarted.pid);
    writeFileSync(join(dir, 'pids'), pids.join('\n'));
    await waitForHostLine(dir, 2, /^ready: /m, 120_000, statSync(logFile).size);
    await waitFor(
      'host-2 Ready again without the unreachable taints',
      async () => {
        const node = await json('get', 'node', 'host-2');
        return (
          node.status.conditions.find((c: any) => c.type === 'Ready').status === 'True' &&
          !(node.spec.taints ?? []).some((t: any) => t.key === 'node.kubernetes.io/unreachable')
        );
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // The evicted pod stayed Terminating while its node was away; back, the kubelet stops it and confirms the deletion.
    await waitFor(
      `the old mover pod ${first.metadata.name} to be gone`,
      async () => (await kubectl(['get', 'pod', first.metadata.name, '-o', 'name'])).stderr.includes('NotFound'),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  }, 300_000);
});
