import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import devPreset from '@skiff/preset-dev';
import { Kubectl, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// Upstream's own kube-scheduler and kube-controller-manager (v1.28.7, built by ../shared/upstream/build.sh) run
// unchanged against a dev-preset Skiff whose scheduler and controllers are removed by config: a Deployment and a
// ReplicationController get their pods from upstream's controllers, placed by upstream's scheduler on Skiff's
// kubelets, and neither component logs an error reading Skiff's API (a watch it cannot decode, a list refused).
// Needs the upstream build (UPSTREAM, default ~/upstream); without it the suite is skipped and says so.

const UPSTREAM = process.env.UPSTREAM ?? join(homedir(), 'upstream');
const SCHEDULER = join(UPSTREAM, 'bin/kube-scheduler');
const CONTROLLER_MANAGER = join(UPSTREAM, 'bin/kube-controller-manager');
const missing = [SCHEDULER, CONTROLLER_MANAGER].find((binary) => !existsSync(binary));
if (missing) console.log(`upstream-components.test.ts skipped: ${missing} not built (run ../shared/upstream/build.sh)`);

/** Lines of a component's log that mean it could not read or decode what Skiff's API sent. */
const API_TROUBLE = /decode|Failed to watch|failed to list|Unhandled Error|unable to (?:list|watch|get)/i;

describe.skipIf(missing !== undefined)("upstream's kube-scheduler and kube-controller-manager against Skiff", () => {
  const project = tempDir('upstream-components');
  const logs = { scheduler: join(project, 'kube-scheduler.log'), controllerManager: join(project, 'kube-controller-manager.log') };
  const components: ChildProcess[] = [];
  let skiff: RunningSkiff;
  let kubectl: Kubectl;

  const run = (binary: string, args: string[], log: string) => {
    const out = openSync(log, 'w');
    const child = spawn(binary, args, { stdio: ['ignore', out, out] });
    closeSync(out);
    components.push(child);
  };

  beforeAll(async () => {
    // Every scheduler and controller plugin of the preset removed: upstream's components do their work.
    const removed = devPreset.plugins
      .map((entry) => (typeof entry === 'string' ? entry : Array.isArray(entry) && typeof entry[0] === 'string' ? entry[0] : ''))
      .filter((name) => /^@skiff\/(scheduler|controller-manager|plugin-scheduler-|plugin-controller-)/.test(name));
    writeFileSync(join(project, 'skiff.config.json'), JSON.stringify({ preset: 'dev', nodes: 2, plugins: removed.map((name) => [name, false]) }));
    skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
    kubectl = new Kubectl(skiff.kubeconfig);
    const kubeconfig = skiff.kubeconfig;
    const common = [`--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`, '--secure-port=0'];
    run(SCHEDULER, common, logs.scheduler);
    const pki = join(project, 'data/pki');
    run(
      CONTROLLER_MANAGER,
      [...common, '--controllers=*', `--cluster-signing-cert-file=${join(pki, 'ca.crt')}`, `--cluster-signing-key-file=${join(pki, 'ca.key')}`],
      logs.controllerManager,
    );
  }, 60_000);

  afterAll(async () => {
    for (const child of components) child.kill('SIGTERM');
    await Promise.all(components.map((child) => (child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined)));
    await skiff?.stop();
    kubectl?.cleanup();
    rmSync(project, { recursive: true, force: true });
  });

  it('run a Deployment and a ReplicationController onto Skiff kubelets, with no API errors in their logs', async () => {
    await kubectl.ok('create', 'deployment', 'web', '--image=nginx', '--replicas=3');
    const rc = {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'legacy' },
      spec: {
        replicas: 2,
        selector: { app: 'legacy' },
        template: { metadata: { labels: { app: 'legacy' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    };
    const applied = await kubectl.run(['apply', '-f', '-'], { input: JSON.stringify(rc) });
    expect(applied.code, applied.stderr).toBe(0);

    const running = await waitFor(
      'five Running pods, placed by upstream',
      async () => {
        const list = await kubectl.json<{ items: { metadata: { name: string }; spec: { nodeName?: string }; status: { phase: string } }[] }>('get', 'pods');
        return list.items.length === 5 && list.items.every((pod) => pod.status.phase === 'Running' && pod.spec.nodeName) ? list.items : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(new Set(running.map((pod) => pod.spec.nodeName)).size).toBe(2);
    // The scheduler writes events.k8s.io/v1 Events: kubectl get events shows them as core Events.
    const events = await kubectl.json<{ items: { reason: string; source?: { component?: string }; reportingComponent?: string }[] }>('get', 'events');
    expect(events.items.filter((event) => event.reason === 'Scheduled').length).toBeGreaterThanOrEqual(5);
    const rcStatus = await kubectl.json<{ status: { readyReplicas?: number } }>('get', 'rc', 'legacy');
    expect(rcStatus.status.readyReplicas).toBe(2);

    for (const log of Object.values(logs)) {
      const trouble = readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => API_TROUBLE.test(line));
      expect(trouble, log).toEqual([]);
    }
  }, 120_000);
});
