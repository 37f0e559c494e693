import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { parse } from 'yaml';
import { Kubectl, startSkiff, tempDir, type RunningSkiff } from './harness.js';

// API Priority and Fairness in a real `skiff up` (dev preset, no nodes), driven over HTTPS by the real kubectl and
// by plain HTTPS clients holding ServiceAccount tokens: the bootstrap configuration is served, one identity's
// flood is queued and then refused with 429 while another identity's reads and the admin's requests go through,
// and 16 unpaginated lists of 3,000 pods leave another client's reads and the server's memory in bounds.

const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  ms: number;
}

interface Cluster {
  skiff: RunningSkiff;
  kubectl: Kubectl;
  ca: string;
  adminToken: string;
  call(method: string, path: string, options?: { token?: string; body?: unknown; agent?: Agent }): Promise<Answer>;
}

/** A `skiff up` in its own project folder, with `config` as its skiff.config.mjs. */
async function cluster(name: string, config?: string): Promise<Cluster> {
  const dir = tempDir(name);
  made.push(dir);
  if (config) writeFileSync(join(dir, 'skiff.config.mjs'), config);
  const skiff = await startSkiff(['--nodes', '0', '--data-dir', join(dir, 'data')], { cwd: dir });
  const kubeconfig = parse(readFileSync(skiff.kubeconfig, 'utf8'));
  const ca = Buffer.from(kubeconfig.clusters[0].cluster['certificate-authority-data'], 'base64').toString('utf8');
  const adminToken: string = kubeconfig.users[0].user.token;
  const agent = new Agent({ keepAlive: true, maxSockets: 32, ca });
  const call: Cluster['call'] = (method, path, options = {}) =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
      const req = request(
        `${skiff.server}${path}`,
        {
          method,
          agent: options.agent ?? agent,
          headers: {
            accept: 'application/json',
            authorization: `Bearer ${options.token ?? adminToken}`,
            ...(payload ? { 'content-type': 'application/json' } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: performance.now() - started }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return { skiff, kubectl: new Kubectl(skiff.kubeconfig), ca, adminToken, call };
}

/** A ServiceAccount of its own namespace and a token for it, made with kubectl. */
async function serviceAccountToken(c: Cluster, namespace: string, name: string): Promise<string> {
  await c.kubectl.ok('create', 'namespace', namespace);
  await c.kubectl.ok('create', 'serviceaccount', name, '-n', namespace);
  return (await c.kubectl.ok('create', 'token', name, '-n', namespace, '--duration', '1h')).trim();
}

async function createPods(c: Cluster, namespace: string, count: number): Promise<void> {
  const pod = (i: number) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${i}`, labels: { app: 'flood', index: String(i) }, annotations: { note: 'x'.repeat(512) } },
    spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'], env: [{ name: 'A', value: 'b'.repeat(64) }] }] },
  });
  for (let i = 0; i < count; i += 32) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(32, count - i) }, (_, j) => c.call('POST', `/api/v1/namespaces/${namespace}/pods`, { body: pod(i + j) })),
    );
    for (const answer of answers) if (answer.status !== 201) throw new Error(`creating a pod: ${answer.status} ${answer.body.toString('utf8')}`);
  }
}

/**
 * A reader in a thread of its own (this thread is busy with the flood's answers): GETs `path` with `token` every
 * `intervalMs` and samples the server's RSS from /proc, until told to stop.
 */
function startReader(
  c: Cluster,
  path: string,
  token: string,
  intervalMs: number,
): { stop(): Promise<{ latencies: number[]; statuses: number[]; peakRssMiB: number }> } {
  const worker = new Worker(
    `
    const { workerData, parentPort } = require('node:worker_threads');
    const https = require('node:https');
    const { readFileSync } = require('node:fs');
    const { url, ca, token, intervalMs, pid } = workerData;
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
    const latencies = [];
    const statuses = [];
    let peakRssMiB = 0;
    let stopping = false;
    const rss = () => {
      const kb = Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/' + pid + '/status', 'utf8'))?.[1] ?? 0);
      peakRssMiB = Math.max(peakRssMiB, kb / 1024);
    };
    const get = () => new Promise((resolve) => {
      const started = performance.now();
      const req = https.request(url, { agent, headers: { authorization: 'Bearer ' + token, accept: 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => { latencies.push(performance.now() - started); statuses.push(res.statusCode); resolve(); });
      });
      req.on('error', () => { statuses.push(0); resolve(); });
      req.end();
    });
    const sampler = setInterval(rss, 50);
    parentPort.on('message', () => { stopping = true; });
    (async () => {
      while (!stopping) {
        const next = performance.now() + intervalMs;
        await get();
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
      }
      clearInterval(sampler);
      rss();
      parentPort.postMessage({ latencies, statuses, peakRssMiB });
    })();
    `,
    { eval: true, workerData: { url: `${c.skiff.server}${path}`, ca: c.ca, token, intervalMs, pid: c.skiff.process.pid } },
  );
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (result) => {
          void worker.terminate();
          resolve(result);
        });
        worker.postMessage('stop');
      }),
  };
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)] ?? 0;
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

describe('API Priority and Fairness, a small server', () => {
  // Ten seats for the whole server: workload-low (ServiceAccounts) gets 5, one a request (5 seats over a hand of 6
  // queues), so five lists of 1,000 pods run at a time and the rest of a flood waits its turn.
  const QUEUE_WAIT_SECONDS = 2;
  let c: Cluster;
  let flooder: string;
  let reader: string;
  beforeAll(async () => {
    c = await cluster(
      'apf-small',
      `export default { plugins: [['@skiff/plugin-flowcontrol-apf', { serverConcurrencyLimit: 10, queueWaitLimitSeconds: ${QUEUE_WAIT_SECONDS} }]] };\n`,
    );
    flooder = await serviceAccountToken(c, 'flood', 'flooder');
    reader = await serviceAccountToken(c, 'read', 'reader');
    await c.kubectl.ok('create', 'configmap', 'read-me', '-n', 'read', '--from-literal=a=b');
    await createPods(c, 'flood', 1000);
  });
  afterAll(async () => {
    expect(await c?.skiff.stop()).toBe(0);
    c?.kubectl.cleanup();
  });

  it('serves the mandatory and suggested FlowSchemas and PriorityLevelConfigurations to kubectl', async () => {
    const out = await c.kubectl.ok('get', 'flowschemas,prioritylevelconfigurations', '-o', 'name');
    const names = out.trim().split('\n').sort();
    expect(names).toEqual(
      [
        ...[
          'catch-all',
          'endpoint-controller',
          'exempt',
          'global-default',
          'kube-controller-manager',
          'kube-scheduler',
          'kube-system-service-accounts',
          'probes',
        ]
          .concat(['service-accounts', 'system-leader-election', 'system-node-high', 'system-nodes', 'workload-leader-election'])
          .map((name) => `flowschema.flowcontrol.apiserver.k8s.io/${name}`),
        ...['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low'].map(
          (name) => `prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/${name}`,
        ),
      ].sort(),
    );
    const table = await c.kubectl.ok('get', 'prioritylevelconfiguration', 'workload-low');
    expect(table).toMatch(/workload-low\s+Limited\s+100\s+128\s+6\s+50\s/);
    const schemas = await c.kubectl.json('get', 'flowschemas');
    for (const schema of schemas.items)
      expect(schema.status?.conditions, schema.metadata.name).toContainEqual(expect.objectContaining({ type: 'Dangling', status: 'False' }));
  });

  it("refuses one identity's flood with 429 and Retry-After, while another identity's GETs and the admin's requests go through", async () => {
    const listPods = '/api/v1/namespaces/flood/pods';
    const warm = await c.call('GET', listPods, { token: flooder });
    expect(warm.status).toBe(200);
    const workloadLow = JSON.parse(
      (await c.call('GET', '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/workload-low')).body.toString('utf8'),
    );
    expect(warm.headers['x-kubernetes-pf-prioritylevel-uid']).toBe(workloadLow.metadata.uid);
    // Short queues, so that the flood overflows them however fast this machine serves it: two waiting requests per
    // queue, six queues in the flooder's hand. Marked autoupdate-spec "false", the change is kept.
    await c.kubectl.ok(
      'patch',
      'prioritylevelconfiguration',
      'workload-low',
      '--type=merge',
      '-p',
      JSON.stringify({
        metadata: { annotations: { 'apf.kubernetes.io/autoupdate-spec': 'false' } },
        spec: { limited: { limitResponse: { queuing: { queueLengthLimit: 2 } } } },
      }),
    );

    const readerRun = startReader(c, '/api/v1/namespaces/read/configmaps/read-me', reader, 50);
    const floodAgent = new Agent({ keepAlive: true, maxSockets: 200, ca: c.ca });
    const flood = Promise.all(Array.from({ length: 200 }, () => c.call('GET', listPods, { token: flooder, agent: floodAgent })));
    // The admin (system:masters) is exempt: kubectl keeps working in the middle of the flood.
    const adminAnswers: Answer[] = [];
    const kubectlRuns: number[] = [];
    for (let i = 0; i < 5; i++) {
      adminAnswers.push(await c.call('GET', listPods));
      kubectlRuns.push((await c.kubectl.run(['get', 'pods', '-n', 'flood', '--no-headers'])).code ?? -1);
    }
    const answers = await flood;
    const read = await readerRun.stop();
    floodAgent.destroy();

    const refused = answers.filter((answer) => answer.status === 429);
    const served = answers.filter((answer) => answer.status === 200);
    expect(served.length + refused.length, `statuses ${[...new Set(answers.map((a) => a.status))].join(', ')}`).toBe(answers.length);
    expect(refused.length).toBeGreaterThan(0);
    expect(served.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(answer.body.toString('utf8'))).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests' });
    }
    expect(refused[0]!.body.toString('utf8')).toContain('priority level \\"workload-low\\"');
    expect(refused.some((answer) => answer.body.toString('utf8').includes('queueLengthLimit 2'))).toBe(true);

    // Fair queuing puts the reader's GET before the flooder's backlog: every one of them is served, none waits
    // anywhere near the queue wait limit that the flooder's requests run into.
    expect(read.statuses.length).toBeGreaterThan(5);
    expect(read.statuses.filter((status) => status !== 200)).toEqual([]);
    expect(Math.max(...read.latencies)).toBeLessThan(QUEUE_WAIT_SECONDS * 1000);
    expect(adminAnswers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(kubectlRuns).toEqual([0, 0, 0, 0, 0]);

    const dump = await c.kubectl.ok('get', '--raw', '/debug/api_priority_and_fairness/dump_priority_levels');
    expect(dump).toMatch(/^workload-low\s*, \d+\s*, true\s*, false\s*, 5\s*,/m);
    console.log(
      `flood: ${served.length} served, ${refused.length} refused (Retry-After ${[...new Set(refused.map((a) => a.headers['retry-after']))].join('/')} s); ` +
        `reader GETs n=${read.latencies.length} p50 ${percentile(read.latencies, 50).toFixed(0)} ms p99 ${percentile(read.latencies, 99).toFixed(0)} ms max ${Math.max(...read.latencies).toFixed(0)} ms`,
    );
  });

  it('applies a new FlowSchema and PriorityLevelConfiguration at once: the flooder alone in a level that rejects', async () => {
    const manifest = `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: penalty-box }
spec:
  type: Limited
  limited: { nominalConcurrencyShares: 1, limitResponse: { type: Reject } }
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: flooder }
spec:
  priorityLevelConfiguration: { name: penalty-box }
  matchingPrecedence: 500
  distinguisherMethod: { type: ByUser }
  rules:
  - subjects: [{ kind: ServiceAccount, serviceAccount: { namespace: flood, name: flooder } }]
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }]
`;
    await c.kubectl.run(['apply', '-f', '-'], { input: manifest }).then((result) => expect(result.stderr).toBe(''));
    const penaltyBox = JSON.parse((await c.call('GET', '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/penalty-box')).body.toString('utf8'));
    let answer: Answer | undefined;
    for (let i = 0; i < 50 && answer?.headers['x-kubernetes-pf-prioritylevel-uid'] !== penaltyBox.metadata.uid; i++) {
      answer = await c.call('GET', '/api/v1/namespaces/flood/pods?limit=1', { token: flooder });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(answer!.headers['x-kubernetes-pf-prioritylevel-uid']).toBe(penaltyBox.metadata.uid);
    // One seat, no queue: of concurrent lists, the ones that find it taken are refused at once.
    const burst = await Promise.all(Array.from({ length: 20 }, () => c.call('GET', '/api/v1/namespaces/flood/pods', { token: flooder })));
    const refused = burst.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.body.toString('utf8')).toContain('limitResponse type Reject');
    // The reader is untouched by it.
    expect((await c.call('GET', '/api/v1/namespaces/read/configmaps/read-me', { token: reader })).status).toBe(200);
  });
});

describe('API Priority and Fairness with the default settings', () => {
  const PODS = 3000;
  const LISTS = 16;
  let c: Cluster;
  let flooder: string;
  let reader: string;
  beforeAll(async () => {
    c = await cluster('apf-default');
    flooder = await serviceAccountToken(c, 'flood', 'flooder');
    reader = await serviceAccountToken(c, 'read', 'reader');
    await c.kubectl.ok('create', 'configmap', 'read-me', '-n', 'read', '--from-literal=a=b');
    await createPods(c, 'flood', PODS);
  });
  afterAll(async () => {
    expect(await c?.skiff.stop()).toBe(0);
    c?.kubectl.cleanup();
  });

  it(`keeps another identity's GETs going during ${LISTS} concurrent unpaginated lists of ${PODS} pods, with the server's memory bounded`, async () => {
    const rssBefore = rssMiB(c.skiff.process.pid!);
    const readerRun = startReader(c, '/api/v1/namespaces/read/configmaps/read-me', reader, 20);
    const floodAgent = new Agent({ keepAlive: true, maxSockets: LISTS, ca: c.ca });
    const started = performance.now();
    const lists = await Promise.all(Array.from({ length: LISTS }, () => c.call('GET', '/api/v1/namespaces/flood/pods', { token: flooder, agent: floodAgent })));
    const floodMs = performance.now() - started;
    const read = await readerRun.stop();
    floodAgent.destroy();

    const full = lists.filter((list) => list.status === 200 && JSON.parse(list.body.toString('utf8')).items.length === PODS).length;
    const refused = lists.filter((list) => list.status === 429 && list.headers['retry-after']).length;
    expect(full + refused).toBe(LISTS);
    expect(full).toBeGreaterThan(0);
    expect(read.statuses.filter((status) => status !== 200)).toEqual([]);
    // The bound on memory, which unbounded lists broke (6.7 GB for 20,000 pods).
    expect(read.peakRssMiB).toBeLessThan(1536);
    console.log(
      `${LISTS} lists of ${PODS} pods: ${full} full, ${refused} refused, ${(floodMs / 1000).toFixed(1)} s; reader GETs n=${read.latencies.length} ` +
        `p50 ${percentile(read.latencies, 50).toFixed(0)} ms p99 ${percentile(read.latencies, 99).toFixed(0)} ms max ${Math.max(...read.latencies).toFixed(0)} ms; ` +
        `server RSS ${rssBefore.toFixed(0)} MiB before, peak ${read.peakRssMiB.toFixed(0)} MiB, ${rssMiB(c.skiff.process.pid!).toFixed(0)} MiB after`,
    );
  });
});
