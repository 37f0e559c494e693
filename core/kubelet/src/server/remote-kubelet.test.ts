import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Node, type Pod, type ResourceType, type SubjectAccessReviewSpec } from '@skiff/api';
import { AUTHORIZE_STAGE, CHAIN_STAGE, definePlugin, type ContainerRuntime } from '@skiff/kernel';
import { startControlPlane, type ControlPlane } from '@skiff/testing';
import { UsageSampler } from '../stats/sampler.js';
import { KubeletNodeConnection } from '../streaming/node-connection.js';
import { adminKubeconfig, podLog } from '../test-support/api-https.js';
import { silentLogger } from '../test-support/objects.js';
import { KubeletServer } from './kubelet-server.js';
import { exchange, follow, httpsGet, pkiOfCa, runPod, startStandInStreaming, streamingRuntime, upgrade, type StandInStreaming } from './test-support.js';

// A node whose kubelet runs outside the API server's process: no in-process connection is registered, so
// the API server reaches the kubelet's HTTPS API at the address the Node reports, with the client certificate
// it issues itself; the kubelet authenticates it, and bearer tokens, and asks the real API server about both.

const run = promisify(execFile);

/** Tokens the control plane knows (for the kubelet's TokenReview), and a viewer its authorizer keeps off nodes/proxy. */
const testAuth = definePlugin({
  name: 'test-remote-kubelet-auth',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    const users: Record<string, { username: string; groups: string[] }> = {
      'carol-token': { username: 'carol', groups: ['system:authenticated'] },
      'viewer-token': { username: 'viewer', groups: ['system:authenticated'] },
    };
    kernel.hooks.authenticate.tap({ name: 'test-remote-kubelet-auth', stage: CHAIN_STAGE.TOKEN }, (request) => {
      const user = users[request.headers.authorization?.replace(/^Bearer /, '') ?? ''];
      return user ? { user } : undefined;
    });
    kernel.hooks.authorize.tap({ name: 'test-remote-kubelet-auth', stage: AUTHORIZE_STAGE.DEFAULT }, (attributes) =>
      attributes.user.username === 'viewer' && attributes.resource === 'nodes' && attributes.subresource === 'proxy'
        ? { decision: 'deny', reason: 'viewers may not reach kubelets' }
        : undefined,
    );
  },
});

const NODE = 'node-far';
let dir: string;
let cluster: ControlPlane;
let streaming: StandInStreaming;
let runtime: ContainerRuntime;
let kubelet: KubeletServer;
let kubeletUrl: string;
let caPem: string;
let containerId: string;
let web: Pod;
let sampler: UsageSampler;
const accessReviews: SubjectAccessReviewSpec[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-remote-kubelet-'));
  cluster = await startControlPlane([testAuth], { config: { logLevel: 'silent' } });
  caPem = cluster.kernel.resolve('apiServerInfo').caPem;
  const pki = pkiOfCa(cluster.dataDir, join(dir, 'kubelet-pki'));
  streaming = await startStandInStreaming();
  runtime = await streamingRuntime(join(dir, 'runtime'), streaming);
  web = await cluster.client.create<Pod>(RESOURCES.pods, {
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      nodeName: NODE,
      containers: [
        { name: 'app', image: 'nginx:1.27' },
        { name: 'later', image: 'nginx:1.27' },
      ],
    },
  });
  ({ containerId } = await runPod(runtime, dir, { namespace: 'default', name: 'web', uid: web.metadata.uid! }, 'app'));
  const pods = () => [web];
  // The kubelet's client of the API server, recording what the kubelet asks.
  const client = {
    create: <T>(type: ResourceType, object: T) => {
      if (type.resource === 'subjectaccessreviews') accessReviews.push((object as { spec: SubjectAccessReviewSpec }).spec);
      return cluster.client.create(type, object as never) as Promise<T>;
    },
  };
  sampler = new UsageSampler({ runtime, periodMs: 60_000, logger: silentLogger });
  kubelet = new KubeletServer({
    usage: () => sampler.snapshot(),
    nodeName: NODE,
    connection: new KubeletNodeConnection({
      nodeName: NODE,
      runtime,
      pod: (namespace, name) => pods().find((pod) => pod.metadata.name === name && pod.metadata.namespace === namespace),
      timing: { pollMs: 20, statusMs: 20 },
    }),
    pods,
    client,
    tls: { ...pki.serving, clientCaPem: caPem },
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger,
  });
  const port = await kubelet.listen();
  kubeletUrl = `https://127.0.0.1:${port}`;
  await cluster.client.create<Node>(RESOURCES.nodes, {
    metadata: { name: NODE },
    status: {
      addresses: [
        { type: 'Hostname', address: NODE },
        { type: 'InternalIP', address: '127.0.0.1' },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: port } },
    },
  });
  const stored = await cluster.client.get<Node>(RESOURCES.nodes, NODE);
  if (!stored.status?.daemonEndpoints)
    await cluster.client.updateStatus(RESOURCES.nodes, {
      ...stored,
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } },
    });
});
afterAll(async () => {
  await kubelet?.close();
  await cluster?.stop();
  await streaming?.close();
  await runtime?.close?.();
  await rm(dir, { recursive: true, force: true });
});

function adminToken(): string {
  return cluster.kernel.resolve('apiHandler').issueLoopbackToken({ username: 'test-admin', groups: ['system:masters', 'system:authenticated'] });
}

describe('the API server reaches a kubelet of another process over HTTPS', () => {
  it("reads a pod's log through the node's kubelet, presenting its own client certificate", async () => {
    expect(await podLog(cluster, 'default', 'web', 'container=app')).toEqual({ status: 200, text: 'simulated container app started (image nginx:1.27)\n' });
    expect(accessReviews.at(-1)).toMatchObject({
      user: 'kube-apiserver-kubelet-client',
      groups: ['system:masters', 'system:authenticated'],
      resourceAttributes: { verb: 'get', resource: 'nodes', subresource: 'proxy', name: NODE },
    });
    expect((await podLog(cluster, 'default', 'web', 'container=app&tailLines=0')).text).toBe('');
  });

  it('serves kubectl logs', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, adminKubeconfig(cluster));
    const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, 'logs', 'web', '-c', 'app']);
    expect(stdout).toBe('simulated container app started (image nginx:1.27)\n');
  });

  it('streams a followed log as the kubelet reads it', async () => {
    const { url } = cluster.kernel.resolve('apiServerInfo');
    const followed = await follow(`${url}/api/v1/namespaces/default/pods/web/log?container=app&follow=true`, { ca: caPem, token: adminToken() });
    expect(followed.status).toBe(200);
    const started = 'simulated container app started (image nginx:1.27)\n';
    await expect.poll(() => followed.text()).toBe(started);
    await appendFile((await runtime.containerStatus(containerId))!.logPath!, '2026-03-01T10:00:00.5Z stdout F over https\n');
    await expect.poll(() => followed.text()).toBe(`${started}over https\n`);
    followed.close();
  });

  it("answers the kubelet's refusals as the Status the in-process kubelet gives", async () => {
    const waiting = await podLog(cluster, 'default', 'web', 'container=later');
    expect(waiting.status).toBe(400);
    expect(JSON.parse(waiting.text)).toMatchObject({
      kind: 'Status',
      code: 400,
      reason: 'BadRequest',
      message: 'container "later" in pod "web" is waiting to start: ContainerCreating',
    });
  });

  it('execs through the API server and the kubelet into the runtime, carrying bytes both ways', async () => {
    const { url } = cluster.kernel.resolve('apiServerInfo');
    const outcome = await upgrade(`${url}/api/v1/namespaces/default/pods/web/exec?container=app&command=cat&stdin=true&stdout=true`, {
      ca: caPem,
      token: adminToken(),
    });
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    expect(outcome.response.headers['x-stream-protocol-version']).toBe('v4.channel.k8s.io');
    expect(await exchange(outcome.socket, 'through two proxies', 'through two proxies'.length, outcome.head)).toBe('THROUGH TWO PROXIES');
    outcome.socket.destroy();
    expect(streaming.requests.at(-1)).toMatchObject({ method: 'POST', url: `/exec/${containerId}?cmd=cat&tty=false` });
    expect(accessReviews.at(-1)).toMatchObject({ user: 'kube-apiserver-kubelet-client', resourceAttributes: { verb: 'create', subresource: 'proxy' } });
  });

  it('answers a Node without an address, a missing Node and a kubelet that is down', async () => {
    const pod = (name: string, nodeName: string) =>
      cluster.client.create<Pod>(RESOURCES.pods, {
        metadata: { name, namespace: 'default' },
        spec: { nodeName, containers: [{ name: 'app', image: 'nginx:1.27' }] },
      });
    await cluster.client.create<Node>(RESOURCES.nodes, { metadata: { name: 'node-nowhere' } });
    await pod('nowhere', 'node-nowhere');
    await pod('ghost', 'node-ghost');
    await cluster.client.create<Node>(RESOURCES.nodes, {
      metadata: { name: 'node-down' },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: 1 } } },
    });
    await pod('down', 'node-down');
    const status = async (name: string) => JSON.parse((await podLog(cluster, 'default', name)).text) as { code: number; message: string };
    expect(await status('nowhere')).toMatchObject({ code: 500, message: expect.stringContaining('no preferred addresses found; known addresses: []') });
    expect(await status('ghost')).toMatchObject({ code: 404, message: 'nodes "node-ghost" not found' });
    expect(await status('down')).toMatchObject({ code: 500, message: expect.stringContaining('error dialing backend') });
  });
});

describe("the API server reads a remote kubelet's resource usage (metrics.k8s.io's source)", () => {
  it('reads the stats Summary over HTTPS: the running container of each pod, rates without a window', async () => {
    // The Summary lists pods the kubelet has started, with their running containers.
    web = {
      ...web,
      status: { startTime: '2026-03-01T10:00:00Z', containerStatuses: [{ name: 'app', state: { running: { startedAt: '2026-03-01T10:00:01Z' } } } as never] },
    };
    await sampler.sample();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await sampler.sample();
    const connection = await cluster.kernel.resolve('apiExtensions').nodeConnection(NODE);
    const usage = await connection!.resourceUsage!();
    expect(usage.nodeName).toBe(NODE);
    expect(usage.pods).toEqual([
      {
        namespace: 'default',
        name: 'web',
        uid: web.metadata.uid,
        // The simulated runtime's default: a thousandth of a core and 4 MiB.
        containers: [{ name: 'app', timestamp: expect.any(String), cpuNanoCores: expect.closeTo(1_000_000, -3), memoryWorkingSetBytes: 4 * 1024 * 1024 }],
      },
    ]);
    expect(accessReviews.at(-1)).toMatchObject({ user: 'kube-apiserver-kubelet-client', resourceAttributes: { verb: 'get', subresource: 'stats' } });
    expect(await cluster.kernel.resolve('apiExtensions').nodeConnection('node-missing')).toBeUndefined();
  });

  it('serves /metrics/resource in the Prometheus text format', async () => {
    const answer = await httpsGet(`${kubeletUrl}/metrics/resource`, { ca: caPem, token: adminToken() });
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^container_memory_working_set_bytes\{container="app",namespace="default",pod="web"\} 4194304 \d+$/m);
  });
});

describe('the kubelet asks the real API server about tokens and access', () => {
  it('takes a bearer token the API server knows, and refuses what the authorizer denies', async () => {
    expect(await httpsGet(`${kubeletUrl}/healthz`, { ca: caPem, token: 'carol-token' })).toMatchObject({ status: 200, text: 'ok' });
    expect(await httpsGet(`${kubeletUrl}/healthz`, { ca: caPem, token: 'unknown-token' })).toMatchObject({ status: 401, text: 'Unauthorized' });
    expect(await httpsGet(`${kubeletUrl}/pods`, { ca: caPem, token: 'viewer-token' })).toMatchObject({
      status: 403,
      text: 'Forbidden (user=viewer, verb=get, resource=nodes, subresource=proxy)',
    });
    expect(await httpsGet(`${kubeletUrl}/stats/summary`, { ca: caPem, token: 'viewer-token' })).toMatchObject({ status: 200 });
  });
});
