import { join } from 'node:path';
import type { ContainerRuntime, PodNetwork } from '@skiff/kernel';
import { ApiEnvSources } from '../env/env-sources.js';
import { CrashLoopBackOff } from '../pods/crash-loop-backoff.js';
import { PodDns } from '../pods/dns.js';
import { PodFiles } from '../pods/pod-files.js';
import { PodRuntimeManager } from '../pods/pod-runtime.js';
import { ActionRunner } from '../probes/actions.js';
import { VolumeManager } from '../volumes/volume-manager.js';
import { fakeApi, type FakeApi } from './fake-api.js';
import { builtinVolumes, ipamNetwork, simulatedRuntime } from './node-parts.js';
import { silentLogger } from './objects.js';
import { recording } from './recording-runtime.js';

export interface ManagerSetup {
  runtime: ContainerRuntime;
  network: PodNetwork;
  dataDir: string;
  api?: FakeApi;
  /** Cluster DNS servers (default one, so pods get cluster DNS without a MissingClusterDNS warning). */
  clusterDNS?: string[];
  /** Crash-loop back-off (default 10 s doubling to 300 s). */
  backOff?: CrashLoopBackOff;
}

/** A PodRuntimeManager over a runtime and network, with the built-in volume plugins and pod files under `dataDir`. */
export function runtimeManager({
  runtime,
  network,
  dataDir,
  api = fakeApi(),
  clusterDNS = ['10.96.0.10'],
  backOff = new CrashLoopBackOff({ initialMs: 10_000, maxMs: 300_000 }),
}: ManagerSetup) {
  const files = new PodFiles(dataDir);
  const node = () => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-1' },
    status: { capacity: { cpu: '4', memory: '8Gi' }, allocatable: { cpu: '4', memory: '8Gi' } },
  });
  const volumes = new VolumeManager({ plugins: builtinVolumes(), files, nodeName: 'node-1', client: api, node, logger: silentLogger });
  const manager = new PodRuntimeManager({
    runtime,
    network,
    hostIP: '127.0.0.1',
    logger: silentLogger,
    files,
    volumes,
    clusterDomain: 'cluster.local',
    env: new ApiEnvSources(api),
    node,
    dns: new PodDns({ clusterDNS, clusterDomain: 'cluster.local', resolvConf: '/etc/resolv.conf' }),
    backOff,
    runner: new ActionRunner(runtime),
  });
  return { manager, volumes, files, api };
}

/**
 * A node on the simulated runtime and network under `dataDir`: the manager with its pod files, the recording of
 * runtime calls, a fake API and an event sink that collects "<type> <reason>: <message>" lines.
 */
export async function simulatedNode(dataDir: string) {
  const recorder = recording(await simulatedRuntime(join(dataDir, 'node')));
  const network = await ipamNetwork(join(dataDir, 'ipam'));
  const api = fakeApi();
  const { manager, files } = runtimeManager({ runtime: recorder.runtime, network, dataDir: join(dataDir, 'node'), api });
  const events: string[] = [];
  const sink = (type: string, reason: string, message: string) => void events.push(`${type} ${reason}: ${message}`);
  return { ...recorder, manager, files, api, events, sink };
}
