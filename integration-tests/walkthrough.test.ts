import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { CLUSTER_TIMEOUT, Kubectl, pods, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The README walkthrough, driven by the real kubectl against the real `skiff up`.
let skiff: RunningSkiff;
let kubectl: Kubectl;
const dataDir = tempDir('walkthrough');

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir, '--nodes', '2']);
  kubectl = new Kubectl(skiff.kubeconfig);
});

afterAll(async () => {
  expect(await skiff?.stop()).toBe(0);
  kubectl?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('kubectl walkthrough', () => {
  it('shows Ready nodes', async () => {
    await waitFor(
      '2 Ready nodes',
      async () => {
        const out = await kubectl.ok('get', 'nodes');
        return (out.match(/\sReady\s/g) ?? []).length === 2;
      },
      CLUSTER_TIMEOUT,
    );
    const out = await kubectl.ok('get', 'nodes');
    expect(out).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION/);
    expect(out).toMatch(/node-1\s+Ready/);
  });

  it('runs a deployment of 3 pods within 5 s, each on a node with its own IP, owned RS → Deployment', async () => {
    const started = Date.now();
    await kubectl.ok('create', 'deployment', 'web', '--image=nginx', '--replicas=3');
    const running = await waitFor(
      '3 Running pods',
      async () => {
        const list = (await pods(kubectl, 'app=web')).filter((p) => p.phase === 'Running');
        return list.length === 3 && list;
      },
      { timeoutMs: 5_000 },
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(running.every((p) => p.node && p.ip)).toBe(true);
    expect(new Set(running.map((p) => p.ip)).size).toBe(3);

    const rs = await kubectl.json('get', 'replicasets', '-l', 'app=web');
    expect(rs.items).toHaveLength(1);
    const replicaSet = rs.items[0];
    expect(replicaSet.metadata.ownerReferences[0]).toMatchObject({ kind: 'Deployment', name: 'web', controller: true });
    expect(running.every((p) => p.owner === replicaSet.metadata.name)).toBe(true);

    await waitFor('deploy web 3/3', async () => /^web\s+3\/3\s+3\s+3\s/m.test(await kubectl.ok('get', 'deploy', 'web')), CLUSTER_TIMEOUT);
  });

  it('scales to 5', async () => {
    await kubectl.ok('scale', 'deployment', 'web', '--replicas=5');
    await waitFor('5 Running pods', async () => (await pods(kubectl, 'app=web')).filter((p) => p.phase === 'Running').length === 5, CLUSTER_TIMEOUT);
    const ips = (await pods(kubectl, 'app=web')).map((p) => p.ip);
    expect(new Set(ips).size).toBe(5);
    await waitFor('deploy web 5/5', async () => /^web\s+5\/5/m.test(await kubectl.ok('get', 'deploy', 'web')), CLUSTER_TIMEOUT);
  });

  it('prints -o wide, -o yaml and filters with -l', async () => {
    const wide = await kubectl.ok('get', 'pods', '-o', 'wide', '-l', 'app=web');
    expect(wide).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES/);
    expect(wide.trim().split('\n')).toHaveLength(6);
    expect(wide).toMatch(/1\/1\s+Running\s+0\s+\S+\s+10\.244\.\d+\.\d+\s+node-\d/);

    const yaml = await kubectl.ok('get', 'deployment', 'web', '-o', 'yaml');
    expect(yaml).toMatch(/^kind: Deployment$/m);
    expect(yaml).toMatch(/^ {2}replicas: 5$/m);

    const none = await kubectl.run(['get', 'pods', '-l', 'app=nothing']);
    expect(none.stderr).toContain('No resources found in default namespace.');
  });

  it('runs a bare pod with kubectl run', async () => {
    await kubectl.ok('run', 'solo', '--image=busybox');
    await waitFor('solo Running', async () => (await pods(kubectl, 'run=solo'))[0]?.phase === 'Running', CLUSTER_TIMEOUT);
  });

  it('streams changes with get pods -w', async () => {
    const watch = kubectl.stream(['get', 'pods', '-w']);
    try {
      await waitFor('initial listing', () => watch.output().includes('solo'), CLUSTER_TIMEOUT);
      await kubectl.ok('run', 'watched', '--image=busybox');
      await waitFor('watched Running in the stream', () => /watched\s+1\/1\s+Running/.test(watch.output()), CLUSTER_TIMEOUT);
    } finally {
      watch.stop();
    }
  });

  it('deletes the deployment with its replica set and pods', async () => {
    await kubectl.ok('delete', 'deployment', 'web');
    await waitFor(
      'web pods and rs gone',
      async () => {
        const [p, rs] = await Promise.all([pods(kubectl, 'app=web'), kubectl.json('get', 'rs', '-l', 'app=web')]);
        return p.length === 0 && rs.items.length === 0;
      },
      CLUSTER_TIMEOUT,
    );
    expect((await pods(kubectl, 'run=solo'))[0]?.phase).toBe('Running');
  });

  it('deletes a namespace with everything in it', async () => {
    await kubectl.ok('create', 'namespace', 'gone');
    await kubectl.ok('run', 'p', '--image=nginx', '-n', 'gone');
    await waitFor('p Running in gone', async () => (await kubectl.json('get', 'pod', 'p', '-n', 'gone')).status?.phase === 'Running', CLUSTER_TIMEOUT);

    // kubectl waits until the namespace is really gone: emptied, then finalized by the namespace controller.
    await kubectl.ok('delete', 'namespace', 'gone', '--timeout=30s');
    const missing = await kubectl.run(['get', 'ns', 'gone']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('NotFound');
    expect((await kubectl.json('get', 'pods', '-n', 'gone')).items).toEqual([]);
  });
});
