import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '@skiff/api';
import { boundPod } from '../test-support/objects.js';
import { simulatedNode } from '../test-support/runtime-manager.js';
import { buildPodStatus } from './pod-status.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-pod-files-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const setUp = () => simulatedNode(dataDir);

const app = (extra: Partial<Container> = {}): Container => ({ name: 'app', image: 'nginx:1.27', ...extra });
const context = { hostIP: '127.0.0.1', runtimeName: 'simulated', now: '2026-01-01T00:00:00Z' };

describe('pod files and mounts', () => {
  it('turns volumeMounts into CRI mounts, then /etc/hosts and the termination log', async () => {
    const { manager, files, config, sandboxes, sink } = await setUp();
    const pod = boundPod('web-1', {
      volumes: [
        { name: 'cache', emptyDir: {} },
        { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
      ],
      containers: [
        app({
          terminationMessagePath: '/dev/termination-log',
          volumeMounts: [
            { name: 'cache', mountPath: '/cache' },
            { name: 'cache', mountPath: '/logs', subPath: 'logs/app', readOnly: true },
            { name: 'info', mountPath: '/etc/info', mountPropagation: 'HostToContainer' },
          ],
        }),
      ],
    });
    const observed = await manager.sync(pod, sink);
    expect(observed.containers[0]!.status?.state).toBe('CONTAINER_RUNNING');
    const volumes = join(files.podDir('uid-web-1'), 'volumes');
    expect(config('app').mounts).toEqual([
      { containerPath: '/cache', hostPath: join(volumes, 'kubernetes.io~empty-dir', 'cache') },
      { containerPath: '/logs', hostPath: join(volumes, 'kubernetes.io~empty-dir', 'cache', 'logs', 'app'), readonly: true },
      {
        containerPath: '/etc/info',
        hostPath: join(volumes, 'kubernetes.io~downward-api', 'info'),
        readonly: true,
        propagation: 'PROPAGATION_HOST_TO_CONTAINER',
      },
      { containerPath: '/etc/hosts', hostPath: files.etcHosts('uid-web-1') },
      { containerPath: '/dev/termination-log', hostPath: files.terminationLog('uid-web-1', 'app', 0) },
    ]);
    expect((await stat(join(volumes, 'kubernetes.io~empty-dir', 'cache', 'logs', 'app'))).isDirectory()).toBe(true);
    expect((await stat(files.terminationLog('uid-web-1', 'app', 0))).mode & 0o777).toBe(0o666);
    // Log paths are relative to the sandbox's log directory, under the node's data dir.
    const logDirectory = join(dataDir, 'node', 'logs', 'default_web-1_uid-web-1');
    expect(sandboxes[0]!.logDirectory).toBe(logDirectory);
    expect(config('app').logPath).toBe('app/0.log');
    expect((await stat(join(logDirectory, 'app'))).isDirectory()).toBe(true);
  });

  it("gives /etc/hosts and subPath folders their modes under the server's umask 0077, for containers of any user", async () => {
    const previous = process.umask(0o077);
    try {
      const { manager, files, sink } = await setUp();
      const pod = boundPod('web-2', {
        volumes: [{ name: 'cache', emptyDir: {} }],
        containers: [app({ volumeMounts: [{ name: 'cache', mountPath: '/logs', subPath: 'logs/app' }] })],
      });
      await manager.sync(pod, sink);
      const cache = join(files.podDir('uid-web-2'), 'volumes', 'kubernetes.io~empty-dir', 'cache');
      const modes = await Promise.all(
        [files.etcHosts('uid-web-2'), join(cache, 'logs'), join(cache, 'logs', 'app')].map(async (path) => (await stat(path)).mode & 0o777),
      );
      expect(modes).toEqual([0o644, 0o777, 0o777]);
    } finally {
      process.umask(previous);
    }
  });

  it('writes /etc/hosts with the pod IP, its FQDN under a subdomain and its host aliases', async () => {
    const { manager, files, sink } = await setUp();
    const pod = boundPod('web-0', {
      hostname: 'web-0',
      subdomain: 'nginx',
      hostAliases: [{ ip: '10.1.2.3', hostnames: ['foo.remote', 'bar.remote'] }],
    });
    const observed = await manager.sync(pod, sink);
    expect(await readFile(files.etcHosts('uid-web-0'), 'utf8')).toBe(
      [
        '# Kubernetes-managed hosts file.',
        '127.0.0.1\tlocalhost',
        '::1\tlocalhost ip6-localhost ip6-loopback',
        'fe00::0\tip6-localnet',
        'fe00::0\tip6-mcastprefix',
        'fe00::1\tip6-allnodes',
        'fe00::2\tip6-allrouters',
        `${observed.podIP}\tweb-0.nginx.default.svc.cluster.local\tweb-0`,
        '',
        '# Entries added by HostAliases.',
        '10.1.2.3\tfoo.remote\tbar.remote',
        '',
      ].join('\n'),
    );
    await manager.sync(boundPod('host-1', { hostNetwork: true }), sink);
    expect(await readFile(files.etcHosts('uid-host-1'), 'utf8')).toMatch(/^# Kubernetes-managed hosts file \(host network\)\.\n/);
  });

  it('does not mount /etc/hosts over a volume the container mounts there', async () => {
    const { manager, config, sink } = await setUp();
    const pod = boundPod('web-1', {
      volumes: [{ name: 'hosts', emptyDir: {} }],
      containers: [app({ volumeMounts: [{ name: 'hosts', mountPath: '/etc/hosts', subPath: 'hosts' }] })],
    });
    await manager.sync(pod, sink);
    expect(config('app').mounts!.filter((m) => m.containerPath === '/etc/hosts')).toHaveLength(1);
  });

  it('reads what an exited container wrote to its termination log into terminated.message', async () => {
    const { runtime, manager, files, sink } = await setUp();
    const pod = boundPod('job-1', { restartPolicy: 'Never', containers: [app({ terminationMessagePath: '/dev/termination-log' })] });
    const first = await manager.sync(pod, sink);
    await writeFile(files.terminationLog('uid-job-1', 'app', 0), 'all done\n');
    await runtime.stopContainer(first.containers[0]!.status!.id, 0);
    const observed = await manager.sync(pod, sink);
    const status = buildPodStatus(pod, observed, context);
    expect(status.containerStatuses![0]!.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed', message: 'all done\n' });
  });

  it('falls back to the end of the log on an error exit with FallbackToLogsOnError', async () => {
    const { runtime, manager, sink } = await setUp();
    const pod: Pod = boundPod('job-1', {
      restartPolicy: 'Never',
      containers: [app({ terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'FallbackToLogsOnError' })],
    });
    pod.metadata.annotations = { 'skiff.io/simulate-run-ms': '0', 'skiff.io/simulate-exit-code': '1' };
    await manager.sync(pod, sink);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const [container] = await runtime.listContainers();
    const logPath = join(dataDir, 'fallback.log');
    await writeFile(
      logPath,
      '2026-01-01T00:00:00.000000001Z stdout F starting\n2026-01-01T00:00:01Z stderr P pan\n2026-01-01T00:00:01Z stderr F ic: no config\n',
    );
    // The simulated runtime keeps no log: this one reports the file above as the container's.
    const listContainers = runtime.listContainers.bind(runtime);
    runtime.listContainers = async (filter) => (await listContainers(filter)).map((c) => (c.id === container!.id ? { ...c, logPath } : c));
    const observed = await manager.sync(pod, sink);
    expect(buildPodStatus(pod, observed, context).containerStatuses![0]!.state?.terminated).toMatchObject({
      exitCode: 1,
      reason: 'Error',
      message: 'starting\npanic: no config\n',
    });
  });

  it('keeps the pod in ContainerCreating, with no sandbox, while a volume cannot be set up', async () => {
    const { runtime, manager, api, events, sink } = await setUp();
    const pod = boundPod('web-1', {
      volumes: [{ name: 'settings', configMap: { name: 'settings' } }],
      containers: [app({ volumeMounts: [{ name: 'settings', mountPath: '/etc/settings' }] })],
    });
    const waiting = await manager.sync(pod, sink);
    expect(waiting).toMatchObject({ sandboxReady: false, incomplete: true, containers: [{ name: 'app', waiting: { reason: 'ContainerCreating' } }] });
    expect(events).toEqual(['Warning FailedMount: MountVolume.SetUp failed for volume "settings" : configmap "settings" not found']);
    expect(await runtime.listPodSandbox()).toEqual([]);
    const status = buildPodStatus(pod, waiting, context);
    expect(status.phase).toBe('Pending');
    expect(status.conditions!.find((c) => c.type === 'PodReadyToStartContainers')!.status).toBe('False');

    api.put('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { a: 'b' } });
    expect((await manager.sync(pod, sink)).containers[0]!.status?.state).toBe('CONTAINER_RUNNING');
  });

  it('answers CreateContainerConfigError for a mount of a volume the pod does not have', async () => {
    const { manager, events, sink } = await setUp();
    const pod = boundPod('web-1', { containers: [app({ volumeMounts: [{ name: 'nowhere', mountPath: '/data' }] })] });
    const observed = await manager.sync(pod, sink);
    expect(observed.containers[0]!.waiting).toEqual({
      reason: 'CreateContainerConfigError',
      message: 'cannot find volume "nowhere" to mount into container "app"',
    });
    expect(events).toContain('Warning Failed: Error: cannot find volume "nowhere" to mount into container "app"');
    expect(observed.incomplete).toBe(true);
  });

  it('refuses a subPath that leaves its volume', async () => {
    const { manager, sink } = await setUp();
    const pod = boundPod('web-1', {
      volumes: [{ name: 'cache', emptyDir: {} }],
      containers: [app({ volumeMounts: [{ name: 'cache', mountPath: '/data', subPath: '../../etc' }] })],
    });
    expect((await manager.sync(pod, sink)).containers[0]!.waiting).toMatchObject({
      reason: 'CreateContainerConfigError',
      message: `subPath "../../etc" of volume mount "cache" must be a relative path without '..'`,
    });
  });
});
