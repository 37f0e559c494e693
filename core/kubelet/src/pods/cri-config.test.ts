import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ipamNetwork, simulatedRuntime } from '../test-support/node-parts.js';
import { boundPod } from '../test-support/objects.js';
import { recording } from '../test-support/recording-runtime.js';
import { runtimeManager, simulatedNode } from '../test-support/runtime-manager.js';
import { buildPodStatus } from './pod-status.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-cri-config-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const setUp = () => simulatedNode(dataDir);

describe('container environment in the CRI config', () => {
  it('hands the runtime the resolved environment and the expanded command, args and subPathExpr', async () => {
    const { manager, config, files, sink } = await setUp();
    const pod = boundPod('web-1', {
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [
        {
          name: 'app',
          image: 'nginx:1.27',
          command: ['sh', '-c', 'echo $(POD_NAME)'],
          args: ['$$(POD_NAME)', '$(POD_IP)'],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          ],
          volumeMounts: [{ name: 'data', mountPath: '/data', subPathExpr: 'pods/$(POD_NAME)' }],
        },
      ],
    });
    const observed = await manager.sync(pod, sink);
    const created = config('app');
    expect(created.envs).toEqual([
      { key: 'POD_NAME', value: 'web-1' },
      { key: 'POD_IP', value: observed.podIP },
    ]);
    expect(created.command).toEqual(['sh', '-c', 'echo web-1']);
    expect(created.args).toEqual(['$(POD_NAME)', observed.podIP]);
    expect(created.mounts![0]).toEqual({
      containerPath: '/data',
      hostPath: join(files.podDir('uid-web-1'), 'volumes', 'kubernetes.io~empty-dir', 'data', 'pods', 'web-1'),
    });
  });

  it('waits in CreateContainerConfigError while a ConfigMap key is missing, then starts once it is there', async () => {
    const { manager, api, events, sink } = await setUp();
    const pod = boundPod('web-1', {
      containers: [{ name: 'app', image: 'nginx:1.27', env: [{ name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'settings', key: 'color' } } }] }],
    });
    const waiting = await manager.sync(pod, sink);
    expect(waiting.incomplete).toBe(true);
    expect(waiting.containers[0]!.waiting).toEqual({ reason: 'CreateContainerConfigError', message: 'configmap "settings" not found' });
    expect(events).toContain('Warning Failed: Error: configmap "settings" not found');
    const status = buildPodStatus(pod, waiting, { hostIP: '127.0.0.1', runtimeName: 'simulated', now: '2026-01-01T00:00:00Z' });
    expect(status.containerStatuses![0]!.state).toEqual({ waiting: { reason: 'CreateContainerConfigError', message: 'configmap "settings" not found' } });

    api.put('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { size: 'L' } });
    expect((await manager.sync(pod, sink)).containers[0]!.waiting).toEqual({
      reason: 'CreateContainerConfigError',
      message: "couldn't find key color in ConfigMap default/settings",
    });
    api.put('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { color: 'blue' } });
    expect((await manager.sync(pod, sink)).containers[0]!.status?.state).toBe('CONTAINER_RUNNING');
  });
});

describe('sandbox and container settings in the CRI config', () => {
  it('hands the runtime resources, security, namespaces, DNS, host name, working dir and terminal settings', async () => {
    const { manager, config, sandboxes, sink, events } = await setUp();
    const pod = boundPod('web-1', {
      hostname: 'front',
      shareProcessNamespace: true,
      containers: [
        {
          name: 'app',
          image: 'nginx:1.27',
          workingDir: '/srv',
          tty: true,
          stdin: true,
          stdinOnce: true,
          resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '500m', memory: '1Gi' } },
          securityContext: { runAsUser: 1000, capabilities: { drop: ['ALL'] } },
        },
      ],
    });
    await manager.sync(pod, sink);
    expect(sandboxes[0]).toMatchObject({
      hostname: 'front',
      dnsConfig: { servers: ['10.96.0.10'], searches: expect.arrayContaining(['default.svc.cluster.local']), options: ['ndots:5'] },
      linux: { securityContext: { namespaceOptions: { network: 'POD', pid: 'POD', ipc: 'POD' } } },
    });
    expect(config('app')).toMatchObject({
      workingDir: '/srv',
      tty: true,
      stdin: true,
      stdinOnce: true,
      linux: {
        resources: { cpuShares: 512, cpuQuota: 50_000, cpuPeriod: 100_000, memoryLimitInBytes: 1024 ** 3, oomScoreAdj: -997 },
        securityContext: { namespaceOptions: { network: 'POD', pid: 'POD', ipc: 'POD' }, runAsUser: 1000, capabilities: { dropCapabilities: ['ALL'] } },
      },
    });
    expect(events.filter((e) => e.includes('DNS'))).toEqual([]);
  });

  it('hands the runtime each host port with its protocol and host IP', async () => {
    const { manager, sandboxes, sink } = await setUp();
    const ports = [
      { containerPort: 8080, hostPort: 54323, hostIP: '127.0.0.1' },
      { containerPort: 8080, hostPort: 54323, hostIP: '192.0.2.2', protocol: 'UDP' },
      { containerPort: 9090, hostPort: 9090 },
      { containerPort: 7070 },
    ];
    await manager.sync(boundPod('ports', { containers: [{ name: 'app', image: 'nginx:1.27', ports }] }), sink);
    expect(sandboxes[0]!.portMappings).toEqual([
      { protocol: 'TCP', containerPort: 8080, hostPort: 54323, hostIp: '127.0.0.1' },
      { protocol: 'UDP', containerPort: 8080, hostPort: 54323, hostIp: '192.0.2.2' },
      { protocol: 'TCP', containerPort: 9090, hostPort: 9090 },
    ]);
  });

  it('warns MissingClusterDNS once, when the sandbox is made, on a node without cluster DNS', async () => {
    const recorder = recording(await simulatedRuntime(join(dataDir, 'node-2')));
    const network = await ipamNetwork(join(dataDir, 'ipam-2'), 1);
    const { manager } = runtimeManager({ runtime: recorder.runtime, network, dataDir: join(dataDir, 'node-2'), clusterDNS: [] });
    const events: string[] = [];
    const sink = (type: string, reason: string) => void events.push(`${type} ${reason}`);
    await manager.sync(boundPod('web-1'), sink);
    await manager.sync(boundPod('web-1'), sink);
    expect(events.filter((e) => e.includes('MissingClusterDNS'))).toEqual(['Warning MissingClusterDNS']);
    expect(recorder.sandboxes[0]!.dnsConfig).toBeDefined();
  });
});
