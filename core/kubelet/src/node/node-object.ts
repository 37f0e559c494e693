import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { Node, NodeCondition, NodeStatus } from '@skiff/api';
import { KUBELET_VERSION } from '../names.js';

export interface NodeCapacity {
  cpu: string;
  memory: string;
  /** ephemeral-storage: every real kubelet reports it, and charts request it. */
  ephemeralStorage?: string;
  pods: number;
}

export interface NodeDescription {
  name: string;
  capacity: NodeCapacity;
  /** "<runtimeName>://<runtimeVersion>", as `kubectl get nodes -o wide` shows it. */
  containerRuntimeVersion: string;
  podCIDR?: string;
  internalIP: string;
  /** The port of the kubelet's HTTPS API, when it serves one (a joined node); 0 otherwise. */
  kubeletPort?: number;
}

const DEFAULT_EPHEMERAL_STORAGE = '100Gi';

/** Node.js' process.arch in Go's GOARCH words, which Kubernetes uses. */
const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
export const NODE_ARCH = GOARCH[process.arch] ?? process.arch;

function osImage(): string {
  try {
    const release = readFileSync('/etc/os-release', 'utf8');
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(release)?.[1];
    if (pretty) return pretty;
  } catch {
    // No os-release (not Linux): fall through to what Node.js knows.
  }
  return `${os.type()} ${os.release()}`;
}

/** A stable id per node name and host (a node's machine-id / system UUID survive restarts). */
function stableId(name: string, purpose: string): string {
  return createHash('sha256').update(`${os.hostname()}/${name}/${purpose}`).digest('hex').slice(0, 32);
}

const BOOT_ID = randomUUID();

/** The conditions a healthy kubelet reports, with Kubernetes' reasons and messages. */
export function healthyConditions(now: string, previous?: NodeCondition[]): NodeCondition[] {
  const conditions: Omit<NodeCondition, 'lastHeartbeatTime' | 'lastTransitionTime'>[] = [
    { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
    { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
    { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
    { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
  ];
  return conditions.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    const lastTransitionTime = before?.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : now;
    return { ...{}, ...c, lastHeartbeatTime: now, lastTransitionTime };
  });
}

export function nodeLabels(name: string): Record<string, string> {
  return {
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': NODE_ARCH,
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': NODE_ARCH,
  };
}

export function nodeStatus(description: NodeDescription, now: string, previous?: NodeCondition[]): NodeStatus {
  const { name, capacity } = description;
  const resources = {
    cpu: capacity.cpu,
    'ephemeral-storage': capacity.ephemeralStorage ?? DEFAULT_EPHEMERAL_STORAGE,
    memory: capacity.memory,
    pods: String(capacity.pods),
  };
  return {
    capacity: resources,
    allocatable: { ...resources },
    conditions: healthyConditions(now, previous),
    addresses: [
      { type: 'InternalIP', address: description.internalIP },
      { type: 'Hostname', address: name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: description.kubeletPort ?? 0 } },
    nodeInfo: {
      machineID: stableId(name, 'machine'),
      systemUUID: stableId(name, 'system'),
      bootID: BOOT_ID,
      kernelVersion: os.release(),
      osImage: osImage(),
      containerRuntimeVersion: description.containerRuntimeVersion,
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: NODE_ARCH,
    },
  };
}

/** The Node object a kubelet registers. */
export function desiredNode(description: NodeDescription, now: string): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: description.name, labels: nodeLabels(description.name) },
    spec: description.podCIDR ? { podCIDR: description.podCIDR, podCIDRs: [description.podCIDR] } : {},
    status: nodeStatus(description, now),
  };
}
