import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeContainerdSocket } from '@skiff/plugin-cri-containerd/images';
import { kubectlOn, kubectlVersions, podRunning, runProgram, waitForPod } from './clients.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';
import { unreachableRoutes } from './routes.js';
import { buildTestImages, INDEX_HTML, missingPrerequisites, pushTestImages, startRegistry, type TestRegistry } from '../scripts/test-images.mjs';
import { freePort } from '../scripts/free-port.mjs';

// A real one-machine cluster (`skiff up --preset local`): containerd started by Skiff, runc, the CNI bridge,
// images from a local registry (Debian's docker-registry on a loopback port, filled from busybox-static), driven
// by the real kubectl. Real containers need root, so without root this file skips and says why; missing Debian
// packages are a failure (`bash scripts/install-system-deps.sh` installs them).

const notRoot = process.getuid?.() !== 0;
if (notRoot) console.log('real-containers.test.ts skipped: real containers need root (the dev preset runs simulated ones)');

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('real');
const cacheDir = tempDir('real-cache');
const dataDir = join(project, 'data');
const WAIT = { timeoutMs: 60_000, intervalMs: 200 };
let skiff: RunningSkiff;
let registry: TestRegistry;
let busybox = '';
const { kubectl, ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

// Crash-loop back-off of 1 s doubling to 4 s keeps the restart tests short (Kubernetes: 10 s to 300 s).
const CONFIG = `export default {
  preset: 'local',
  plugins: [
    ['@skiff/kubelet', { crashLoopBackoffBaseSeconds: 1, crashLoopBackoffMaxSeconds: 4 }],
  ],
};
`;

const nodeDir = () => join(dataDir, 'nodes', 'node-1');

/** The shims and processes of this cluster's containerd (other containerds on the machine are not ours). */
function ourProcesses(): string[] {
  const socket = nodeContainerdSocket(nodeDir());
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(socket) || line.includes(join(nodeDir(), 'containerd')));
}

let removeRoutes: (() => void) | undefined;

beforeAll(async () => {
  if (notRoot) return;
  // Addresses of the service and pod ranges that nothing here serves fail at once instead of leaving the machine.
  removeRoutes = unreachableRoutes();
  const missing = missingPrerequisites({ registry: true });
  if (missing.length) throw new Error(`real containers need: ${missing.join('; ')} (bash scripts/install-system-deps.sh)`);
  const images = await buildTestImages({ out: join(project, 'images') });
  registry = await startRegistry({ out: join(project, 'images') });
  await pushTestImages(images, registry.address);
  busybox = `${registry.address}/skiff/busybox:1`;
  writeFileSync(join(project, 'skiff.config.mjs'), CONFIG);
  skiff = await startSkiff(['--data-dir', dataDir], { cwd: project, timeoutMs: 60_000 });
}, 120_000);

afterAll(async () => {
  removeRoutes?.();
  await skiff?.stop();
  await registry?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe.skipIf(notRoot)('real containers with kubectl', () => {
  it('kubectl run starts httpd in a real container; the host reaches the pod IP; port-forward answers on 127.0.0.1', async () => {
    expect(await ok('run', 'web', `--image=${busybox}`, '--port=8080', '--', 'sh', '-c', 'echo serving /www; exec httpd -f -p 8080 -h /www')).toBe(
      'pod/web created\n',
    );
    const pod = await waitForPod(json, 'web', podRunning, 'ran');
    expect(pod.status.podIP).toMatch(/^10\.244\.1\.\d+$/);
    expect(pod.status.containerStatuses[0]).toMatchObject({ ready: true, restartCount: 0, started: true });
    expect(pod.status.containerStatuses[0].containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(pod.status.containerStatuses[0].imageID).toMatch(/sha256:[0-9a-f]{64}$/);
    const answer = await fetch(`http://${pod.status.podIP}:8080/`);
    expect(await answer.text()).toBe(INDEX_HTML);

    const port = await freePort();
    const forward = spawn(kubectl136.path, ['--kubeconfig', skiff.kubeconfig, '--cache-dir', cacheDir, 'port-forward', 'pod/web', `${port}:8080`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let said = '';
    forward.stdout.on('data', (d: Buffer) => (said += d.toString()));
    forward.stderr.on('data', (d: Buffer) => (said += d.toString()));
    try {
      await waitFor(`port-forward to listen (it said: ${said})`, () => said.includes('Forwarding from 127.0.0.1'), WAIT);
      for (let i = 0; i < 3; i++) expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe(INDEX_HTML);
    } finally {
      forward.kill('SIGINT');
    }
  });

  it('kubectl exec (exit codes, stdin), logs and cp both ways, with every kubectl 1.27–1.36', async () => {
    for (const { minor, path } of kubectlVersions()) {
      const { kubectl: versioned } = kubectlOn(path, () => skiff.kubeconfig, join(cacheDir, `exec-${minor}`));
      expect({ minor, out: (await versioned(['logs', 'web'])).stdout }).toEqual({ minor, out: 'serving /www\n' });
      const local = join(project, `cp-${minor}.txt`);
      writeFileSync(local, `kubectl 1.${minor} was here\n`);
      expect({ minor, code: (await versioned(['cp', local, `web:/tmp/cp-${minor}.txt`])).code }).toEqual({ minor, code: 0 });
      expect({ minor, code: (await versioned(['cp', `web:/tmp/cp-${minor}.txt`, `${local}.back`])).code }).toEqual({ minor, code: 0 });
      expect(readFileSync(`${local}.back`, 'utf8')).toBe(`kubectl 1.${minor} was here\n`);
      const hostname = await versioned(['exec', 'web', '--', 'cat', '/etc/hostname']);
      expect({ minor, code: hostname.code, out: hostname.stdout, err: hostname.stderr }).toEqual({ minor, code: 0, out: 'web\n', err: '' });
      const failing = await versioned(['exec', 'web', '--', 'sh', '-c', 'echo oops >&2; exit 3']);
      expect({ minor, code: failing.code, err: failing.stderr }).toEqual({ minor, code: 3, err: 'oops\ncommand terminated with exit code 3\n' });
      const stdin = await versioned(['exec', '-i', 'web', '--', 'sh', '-c', 'tr a-z A-Z'], 'shout\n');
      expect({ minor, out: stdin.stdout }).toEqual({ minor, out: 'SHOUT\n' });
    }
  });

  it('kubectl cp copies a file into the pod and back out', async () => {
    const local = join(project, 'note.txt');
    writeFileSync(local, 'copied both ways\n');
    await ok('cp', local, 'web:/tmp/note.txt');
    expect(await ok('exec', 'web', '--', 'cat', '/tmp/note.txt')).toBe('copied both ways\n');
    await ok('cp', 'web:/tmp/note.txt', join(project, 'back.txt'));
    expect(readFileSync(join(project, 'back.txt'), 'utf8')).toBe('copied both ways\n');
  });

  it('kubectl logs prints the output, follows it, and shows the previous instance after a crash', async () => {
    await apply(`apiVersion: v1
kind: Pod
metadata: {name: talker}
spec:
  containers:
  - name: talk
    image: ${busybox}
    command: ["sh", "-c", "echo first; sleep 1; echo to-stderr >&2; i=0; while [ $i -lt 3 ]; do sleep 1; i=$((i+1)); echo tick $i; done; exit 1"]
`);
    await waitForPod(json, 'talker', podRunning, 'ran');
    await waitFor('the first lines in kubectl logs', async () => (await ok('logs', 'talker')).includes('first\nto-stderr\n'), WAIT);
    expect(await ok('logs', 'talker', '--tail=1')).toMatch(/^(first|to-stderr|tick \d)\n$/);
    const followed = await kubectl(['logs', '-f', 'talker'], undefined, 30_000);
    expect(followed.stdout).toBe('first\nto-stderr\ntick 1\ntick 2\ntick 3\n');
    await waitForPod(json, 'talker', (pod) => pod.status.containerStatuses[0].restartCount >= 1, 'restarted');
    expect(await ok('logs', 'talker', '--previous')).toBe('first\nto-stderr\ntick 1\ntick 2\ntick 3\n');
    expect(await ok('logs', 'talker', '--timestamps', '--tail=1', '--previous')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z tick 3\n$/);
    await ok('delete', 'pod', 'talker', '--grace-period=1');
  });

  it('kubectl attach streams a running container; kubectl run -i --rm passes stdin through and removes the pod', async () => {
    const shout = await kubectl(['run', '-i', '--rm', '--restart=Never', 'upper', `--image=${busybox}`, '--', 'tr', 'a-z', 'A-Z'], 'quiet please\n');
    expect({ code: shout.code, out: shout.stdout }).toEqual({ code: 0, out: 'QUIET PLEASE\npod "upper" deleted from default namespace\n' });
    expect((await kubectl(['get', 'pod', 'upper'])).code).toBe(1);

    await ok('run', 'ticker', `--image=${busybox}`, '--', 'sh', '-c', 'i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done');
    await waitForPod(json, 'ticker', podRunning, 'ran');
    const attach = spawn(kubectl136.path, ['--kubeconfig', skiff.kubeconfig, '--cache-dir', cacheDir, 'attach', 'ticker'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let seen = '';
    attach.stdout.on('data', (d: Buffer) => (seen += d.toString()));
    try {
      await waitFor('ticks through kubectl attach', () => /tick \d+\ntick \d+\n/.test(seen), WAIT);
    } finally {
      attach.kill('SIGINT');
    }
    await ok('delete', 'pod', 'ticker', '--grace-period=0', '--force');
  });

  it('an exit 3 shows Terminated with exit code 3, then CrashLoopBackOff', async () => {
    await ok('run', 'crasher', `--image=${busybox}`, '--', 'sh', '-c', 'exit 3');
    const terminated = await waitForPod(
      json,
      'crasher',
      (pod) => pod.status.containerStatuses?.[0]?.lastState?.terminated?.exitCode === 3,
      'terminated with 3',
    );
    expect(terminated.status.containerStatuses[0].lastState.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    await waitForPod(json, 'crasher', (pod) => pod.status.containerStatuses[0].state.waiting?.reason === 'CrashLoopBackOff', 'went CrashLoopBackOff');
    // The table is read again: between two back-offs the container may be running for an instant.
    await waitFor(
      'kubectl get to show CrashLoopBackOff',
      async () => /^crasher\s+0\/1\s+CrashLoopBackOff\s+\d+/.test((await ok('get', 'pod', 'crasher')).split('\n')[1] ?? ''),
      WAIT,
    );
    await ok('delete', 'pod', 'crasher', '--grace-period=0', '--force');
  });

  it("an unknown image shows ErrImagePull, then ImagePullBackOff with the registry's message", async () => {
    await ok('run', 'ghost', `--image=${registry.address}/skiff/nothing:1`);
    const pod = await waitForPod(json, 'ghost', (p) => p.status.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff', 'went ImagePullBackOff');
    expect(pod.status.phase).toBe('Pending');
    const events = await ok('get', 'events', '--field-selector', 'involvedObject.name=ghost');
    expect(events).toMatch(/Failed to pull image ".*skiff\/nothing:1": .*not found/);
    await ok('delete', 'pod', 'ghost', '--grace-period=0', '--force');
  });

  it('two containers share an emptyDir; configMap and secret volumes and env carry their values; a memory limit reaches the cgroup', async () => {
    await ok('create', 'configmap', 'settings', '--from-literal=color=blue');
    await ok('create', 'secret', 'generic', 'creds', '--from-literal=password=s3cret');
    await apply(`apiVersion: v1
kind: Pod
metadata: {name: duo}
spec:
  volumes:
  - {name: shared, emptyDir: {}}
  - {name: settings, configMap: {name: settings}}
  - {name: creds, secret: {secretName: creds}}
  containers:
  - name: writer
    image: ${busybox}
    command: ["sh", "-c", "echo from-writer > /shared/note; exec sleep 3600"]
    volumeMounts: [{name: shared, mountPath: /shared}]
    resources: {limits: {memory: 64Mi, cpu: 250m}}
  - name: reader
    image: ${busybox}
    command: ["sleep", "3600"]
    env:
    - {name: COLOR, valueFrom: {configMapKeyRef: {name: settings, key: color}}}
    - {name: PASSWORD, valueFrom: {secretKeyRef: {name: creds, key: password}}}
    - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    volumeMounts:
    - {name: shared, mountPath: /shared}
    - {name: settings, mountPath: /etc/settings}
    - {name: creds, mountPath: /etc/creds, readOnly: true}
`);
    await waitForPod(json, 'duo', podRunning, 'ran');
    await waitFor(
      'the note in the shared emptyDir',
      async () => (await kubectl(['exec', 'duo', '-c', 'reader', '--', 'cat', '/shared/note'])).stdout === 'from-writer\n',
      WAIT,
    );
    expect(await ok('exec', 'duo', '-c', 'reader', '--', 'cat', '/etc/settings/color')).toBe('blue');
    expect(await ok('exec', 'duo', '-c', 'reader', '--', 'cat', '/etc/creds/password')).toBe('s3cret');
    expect(await ok('exec', 'duo', '-c', 'reader', '--', 'sh', '-c', 'echo $COLOR $PASSWORD $POD_NAME')).toBe('blue s3cret duo\n');
    const limit = await ok('exec', 'duo', '-c', 'writer', '--', 'cat', '/sys/fs/cgroup/memory/memory.limit_in_bytes');
    expect(Number(limit)).toBe(64 * 1024 * 1024);
    await ok('delete', 'pod', 'duo', '--grace-period=1');
  });

  it('a failing liveness probe restarts the container; readiness gates the Ready condition', async () => {
    await apply(`apiVersion: v1
kind: Pod
metadata: {name: probed}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: ${busybox}
    command: ["sh", "-c", "touch /tmp/alive; exec httpd -f -p 8080 -h /www"]
    livenessProbe: {exec: {command: ["cat", "/tmp/alive"]}, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 2}
    readinessProbe: {httpGet: {path: /ready.html, port: 8080}, periodSeconds: 1, failureThreshold: 1}
`);
    const started = await waitForPod(json, 'probed', podRunning, 'ran');
    expect(started.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('False');
    await ok('exec', 'probed', '--', 'sh', '-c', 'echo ok > /www/ready.html');
    const ready = await waitForPod(json, 'probed', (pod) => pod.status.conditions.find((c: any) => c.type === 'Ready')?.status === 'True', 'became Ready');
    expect(ready.status.containerStatuses[0].restartCount).toBe(0);
    await ok('exec', 'probed', '--', 'rm', '/tmp/alive');
    const restarted = await waitForPod(json, 'probed', (pod) => pod.status.containerStatuses[0].restartCount >= 1, 'restarted');
    expect(restarted.status.containerStatuses[0].lastState.terminated).toBeDefined();
    const events = await ok('get', 'events', '--field-selector', 'involvedObject.name=probed');
    expect(events).toMatch(/Unhealthy.*Liveness probe failed/);
    await ok('delete', 'pod', 'probed', '--grace-period=1');
  });

  it('deleting pods leaves no container processes, mounts, network namespaces, veths, IP allocations or iptables rules', async () => {
    await ok('delete', 'pods', '--all', '--grace-period=1', '--wait=true');
    await waitFor('every pod to be gone', async () => (await json('get', 'pods')).items.length === 0, WAIT);
    const containerdDir = join(nodeDir(), 'containerd');
    expect(ourProcesses().filter((line) => line.includes('containerd-shim'))).toEqual([]);
    const mounts = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .filter((line) => line.includes(containerdDir) || line.includes('/run/skiff-containerd-'));
    expect(mounts).toEqual([]);
    const stateDirs = readdirSync('/run').filter((name) => name.startsWith('skiff-containerd-'));
    for (const dir of stateDirs) {
      const netns = join('/run', dir, 'io.containerd.grpc.v1.cri', 'netns');
      if (existsSync(netns)) expect(readdirSync(netns)).toEqual([]);
    }
    expect(
      execFileSync('ip', ['-o', 'link', 'show', 'type', 'veth'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('master skiff0')),
    ).toEqual([]);
    const allocations = join(nodeDir(), 'cni', 'networks');
    const allocated = existsSync(allocations)
      ? readdirSync(allocations).flatMap((net) => readdirSync(join(allocations, net)).filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(f)))
      : [];
    expect(allocated).toEqual([]);
    const rules = execFileSync('iptables-save', { encoding: 'utf8' }).split('\n');
    expect(rules.filter((line) => /^-A CNI-[0-9a-f]{24}/.test(line) || /^-A CNI-DN-/.test(line))).toEqual([]);
  });

  it('skiff image import loads an archive into the running node', async () => {
    const images = await buildTestImages({ out: join(project, 'images') });
    const result = await runProgram(process.execPath, [
      join(process.cwd(), 'node_modules/.bin/skiff'),
      'image',
      'import',
      images.images.busybox.archive,
      '--data-dir',
      dataDir,
    ]);
    expect({ code: result.code, out: result.stdout }).toEqual({ code: 0, out: 'node-1: imported skiff.local/busybox:1\n' });
    await ok('run', 'imported', '--image=skiff.local/busybox:1', '--image-pull-policy=Never', '--', 'sleep', '3600');
    await waitForPod(json, 'imported', podRunning, 'ran');
    await ok('delete', 'pod', 'imported', '--grace-period=0', '--force');
  });

  it('Ctrl-C stops the pods, containerd and its shims, and frees the network', async () => {
    await ok('run', 'last', `--image=${busybox}`, '--', 'sleep', '3600');
    await waitForPod(json, 'last', podRunning, 'ran');
    expect(await skiff.stop()).toBe(0);
    expect(ourProcesses()).toEqual([]);
    expect(execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })).not.toMatch(/ skiff0[:@]/);
    mkdirSync(cacheDir, { recursive: true });
  });
});
