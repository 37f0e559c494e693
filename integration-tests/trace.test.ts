import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Span } from '@skiff/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kubectl, SKIFF_BIN, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// `skiff trace` on a real cluster (dev preset, two nodes, so the scheduler scores): the journey of `kubectl create deployment` from the
// API server's hooks through the store, the controllers, the scheduler (in its worker thread) and the kubelet down
// to the runtime's calls, as the CLI prints it in JSON, and the HTML page rendered by a real headless Chromium.

const dataDir = tempDir('trace');
const work = tempDir('trace-out');
let skiff: RunningSkiff;
let kubectl: Kubectl;
let spans: Span[] = [];

/** Starts the built `skiff` with the cluster's data dir; `stderr()` reads what it printed so far. */
function startCli(args: string[]): { stderr: () => string; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [SKIFF_BIN, ...args, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return { stderr: () => stderr, done: new Promise((resolveRun) => child.once('close', (code) => resolveRun({ code, stdout, stderr }))) };
}

function runSkiff(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return startCli(args).done;
}

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir, '--nodes', '2']);
  kubectl = new Kubectl(skiff.kubeconfig);
});
afterAll(async () => {
  await skiff?.stop();
  kubectl?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

/** The index of the first span (in start order) that matches. */
function first(match: (span: Span) => boolean, what: string): number {
  const index = spans.findIndex(match);
  if (index < 0) throw new Error(`no span ${what} among:\n${spans.map((s) => `${s.component} ${s.hook ?? ''} ${s.name}`).join('\n')}`);
  return index;
}

function ancestors(span: Span): Span[] {
  const byId = new Map(spans.map((s) => [s.id, s]));
  const chain: Span[] = [];
  for (let parent = span.parent && byId.get(span.parent); parent; parent = parent.parent ? byId.get(parent.parent) : undefined) chain.push(parent);
  return chain;
}

describe('skiff trace', () => {
  it('says in one line that nothing was recorded for an object while tracing is off', async () => {
    await kubectl.ok('create', 'configmap', 'untraced', '--from-literal=a=b');
    const result = await runSkiff(['trace', 'configmap/untraced']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'skiff: no spans held for configmaps/untraced: tracing is off; arm one with `skiff trace --next` before the command, or start the cluster with trace.mode "on"',
    );
  });

  it('follows kubectl create deployment through authn, authz, admission, the store, the controllers, the scheduler and the kubelet to the runtime', async () => {
    const traced = startCli(['trace', '--next', '--json', '--settle', '3', '--timeout', '60']);
    // It says when the trace is armed; then the request it waits for is made.
    await waitFor('skiff trace --next to arm', () => traced.stderr().includes('waiting for the next'), { timeoutMs: 15_000 });
    await kubectl.ok('create', 'deployment', 'web', '--image=nginx', '--replicas=2');
    const result = await traced.done;
    expect(result.code, result.stderr).toBe(0);
    spans = (JSON.parse(result.stdout) as { spans: Span[] }).spans;

    // One trace: everything the request caused.
    const root = spans[0]!;
    expect(root).toMatchObject({ kind: 'request', component: 'apiserver', name: 'POST /apis/apps/v1/namespaces/default/deployments' });
    expect(root.parent).toBeUndefined();
    expect(root.attrs).toMatchObject({ code: 201, kind: 'Deployment', name: 'web' });
    expect(new Set(spans.map((s) => s.trace))).toEqual(new Set([root.trace]));

    // The request's own hooks, each naming the plugin that ran and what it answered.
    const own = spans.filter((s) => s.parent === root.id || ancestors(s)[0]?.parent === root.id);
    expect(own.some((s) => s.hook === 'authenticate' && String(s.attrs?.result).startsWith('user '))).toBe(true);
    expect(own.some((s) => s.hook === 'authorize' && s.attrs?.result === 'allow')).toBe(true);
    const mutating = new Set(own.filter((s) => s.hook === 'mutate').map((s) => s.plugin));
    const validating = new Set(own.filter((s) => s.hook === 'validate').map((s) => s.plugin));
    expect(mutating).toContain('@skiff/plugin-admission-service-account');
    expect(mutating.size).toBeGreaterThanOrEqual(5);
    expect(validating).toContain('@skiff/plugin-admission-namespace-lifecycle');
    const write = own.find((s) => s.kind === 'store' && s.name === 'store create')!;
    expect(write.attrs).toMatchObject({ key: '/registry/apps/deployments/default/web' });
    expect(write.attrs?.revision).toEqual(Number(root.attrs?.resourceVersion));
    // A request's steps happen inside it: its duration is its own time plus theirs.
    for (const step of own.filter((s) => s.parent === root.id)) {
      expect(step.start).toBeGreaterThanOrEqual(root.start);
      expect(step.end).toBeLessThanOrEqual(root.end + 0.01);
    }

    // In the order a reader of "what happens when you kubectl run" expects.
    const order = [
      first((s) => s === root, 'for the request'),
      first((s) => s.hook === 'authenticate', 'authenticate'),
      first((s) => s.hook === 'authorize', 'authorize'),
      first((s) => s.hook === 'mutate', 'mutate'),
      first((s) => s.name === 'validation', 'validation'),
      first((s) => s.hook === 'validate', 'validate'),
      first((s) => s === write, 'store create'),
      first((s) => s.component === 'controller-manager' && s.name === 'deployment sync default/web', 'deployment controller'),
      first((s) => s.component === 'controller-manager' && /^replicaset sync default\/web-/.test(s.name), 'replicaset controller'),
      first((s) => s.kind === 'request' && s.name === 'POST /api/v1/namespaces/default/pods', 'pod create'),
      first((s) => s.component === 'scheduler' && /^schedule default\/web-/.test(s.name), 'scheduling'),
      first((s) => s.kind === 'request' && /\/pods\/web-[^/]+\/binding$/.test(s.name), 'binding'),
      first((s) => s.component.startsWith('kubelet/node-') && s.kind === 'controller', 'kubelet sync'),
      first((s) => s.name === 'cri runPodSandbox', 'RunPodSandbox'),
      first((s) => s.name === 'cni add', 'CNI add'),
      first((s) => s.name === 'cri pullImage', 'PullImage'),
      first((s) => s.name === 'cri createContainer', 'CreateContainer'),
      first((s) => s.name === 'cri startContainer', 'StartContainer'),
      first((s) => s.kind === 'request' && /^PUT \/api\/v1\/namespaces\/default\/pods\/web-[^/]+\/status$/.test(s.name), 'pod status update'),
    ];
    expect(order).toEqual([...order].sort((a, b) => a - b));

    // Both pods: admitted, scheduled with each filter and score plugin on the node, run by the kubelet.
    const pods = spans.filter((s) => s.kind === 'request' && s.name === 'POST /api/v1/namespaces/default/pods');
    expect(pods).toHaveLength(2);
    const schedules = spans.filter((s) => s.component === 'scheduler' && s.name.startsWith('schedule '));
    expect(schedules).toHaveLength(2);
    for (const schedule of schedules) {
      expect(schedule.attrs?.node).toMatch(/^node-[12]$/);
      const plugins = spans.filter((s) => s.parent === schedule.id);
      expect(plugins.some((s) => s.name === 'filter NodeResourcesFit' && s.plugin === '@skiff/plugin-scheduler-resources-fit')).toBe(true);
      const scores = plugins.find((s) => s.name === 'score NodeResourcesBalancedAllocation');
      expect(String(scores?.attrs?.result)).toMatch(/^scores (node-1=\d+ node-2=\d+|node-2=\d+ node-1=\d+)$/);
      // Linked: the attempt descends from the ReplicaSet controller's create of its pod.
      expect(ancestors(schedule).some((s) => /^replicaset sync /.test(s.name))).toBe(true);
    }
    const started = spans.filter((s) => s.name === 'cri startContainer');
    expect(started).toHaveLength(2);
    for (const start of started)
      expect(ancestors(start).some((s) => /^kubelet\/node-[12]$/.test(s.component) && /^pods@node-[12] sync default\/web-/.test(s.name))).toBe(true);
    expect(spans.filter((s) => s.name === 'cri runPodSandbox').map((s) => s.attrs?.pod)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^default\/web-/)]),
    );
  });

  it('finds the same journey from the Deployment, through the owner references of its ReplicaSet and Pods', async () => {
    const result = await runSkiff(['trace', 'deployment/web', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const found = (JSON.parse(result.stdout) as { spans: Span[] }).spans;
    expect(found.map((s) => s.id).sort()).toEqual(expect.arrayContaining(spans.map((s) => s.id)));
    const timeline = await runSkiff(['trace', 'deployment/web']);
    expect(timeline.code).toBe(0);
    expect(timeline.stdout).toMatch(/\[apiserver\] POST \/apis\/apps\/v1\/namespaces\/default\/deployments {2}code=201/);
    expect(timeline.stdout).toMatch(/\[scheduler\] +schedule default\/web-\S+ {2}result=node node-[12]/);
    expect(timeline.stdout).toMatch(/\[kubelet\/node-[12]\] +cri startContainer · @skiff\/plugin-cri-simulated/);
  });

  it('writes one self-contained HTML page that headless Chromium renders with a row per span', async () => {
    const page = join(work, 'web.html');
    const result = await runSkiff(['trace', '--id', spans[0]!.trace, '--html', page]);
    expect(result.code, result.stderr).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`);
    const chromium = (...args: string[]) =>
      spawnSync(
        'chromium',
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          `--user-data-dir=${join(work, 'chromium')}`,
          ...args,
          `file://${page}`,
        ],
        { encoding: 'utf8', timeout: 60_000 },
      );
    const dom = chromium('--dump-dom');
    expect(dom.status, dom.stderr).toBe(0);
    expect(dom.stdout.match(/<g class="span"/g)).toHaveLength(spans.length);
    const labels = [...dom.stdout.matchAll(/<text [^>]*class="label">([^<]*)<\/text>/g)].map((m) => m[1]!);
    expect(labels[0]).toBe('POST /apis/apps/v1/namespaces/default/deployments');
    expect(labels.some((label) => label.includes('deployment sync default/web'))).toBe(true);
    expect(labels.some((label) => label.includes('cri startContainer'))).toBe(true);
    const png = join(work, 'web.png');
    const shot = chromium(`--screenshot=${png}`, '--window-size=1600,1000');
    expect(shot.status, shot.stderr).toBe(0);
    expect(statSync(png).size).toBeGreaterThan(10_000);
  });
});
