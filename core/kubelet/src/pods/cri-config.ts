import type { Container, Pod } from '@skiff/api';
import type { ContainerConfig, ContainerMount, PodSandboxConfig } from '@skiff/kernel';
import { CRI_LABELS } from '../names.js';
import type { DnsConfig } from './dns.js';
import { podHostname } from './etc-hosts.js';
import { containerResources, containerSecurityContext, sandboxLinux } from './linux-config.js';

/** The labels that tie runtime objects to a pod. */
export function podLabels(pod: Pod): Record<string, string> {
  return {
    [CRI_LABELS.POD_NAME]: pod.metadata.name!,
    [CRI_LABELS.POD_NAMESPACE]: pod.metadata.namespace!,
    [CRI_LABELS.POD_UID]: pod.metadata.uid!,
  };
}

/** What the kubelet worked out for the pod's sandbox besides the pod itself. */
export interface SandboxSettings {
  /** Where the runtime writes the containers' logs (`<container>/<attempt>.log` under it). */
  logDirectory: string;
  /** The pod's resolver configuration (from its dnsPolicy and dnsConfig). */
  dnsConfig?: DnsConfig;
}

/** What the kubelet worked out for a container besides its spec. */
export interface ContainerSettings {
  mounts: ContainerMount[];
  /** The container's final environment (envFrom, env, service variables). */
  env: ReadonlyMap<string, string>;
  /** command and args with `$(VAR)` expanded. */
  command?: string[];
  args?: string[];
  /** The node's memory in bytes (the OOM score adjustment of Burstable containers). */
  memoryCapacity: number;
}

/** The CRI log path of a container instance, relative to the sandbox's logDirectory. */
export function containerLogPath(container: string, attempt: number): string {
  return `${container}/${attempt}.log`;
}

/** The pod's host ports (CNI portMappings and the sandbox's). */
export function hostPortMappings(pod: Pod): NonNullable<PodSandboxConfig['portMappings']> {
  return pod.spec.containers
    .flatMap((container) => container.ports ?? [])
    .filter((port) => port.hostPort)
    .map((port) => ({
      protocol: port.protocol ?? 'TCP',
      containerPort: port.containerPort,
      hostPort: port.hostPort,
      ...(port.hostIP ? { hostIp: port.hostIP } : {}),
    }));
}

/** The sandbox of a pod: host name (none with hostNetwork: the node's), log directory, DNS, namespaces and security. */
export function sandboxConfig(pod: Pod, attempt: number, settings: SandboxSettings): PodSandboxConfig {
  const { name, namespace, uid } = pod.metadata as { name: string; namespace: string; uid: string };
  const portMappings = hostPortMappings(pod);
  return {
    metadata: { name, namespace, uid, attempt },
    ...(pod.spec.hostNetwork ? {} : { hostname: podHostname(pod) }),
    logDirectory: settings.logDirectory,
    ...(settings.dnsConfig ? { dnsConfig: settings.dnsConfig } : {}),
    labels: { ...{}, ...pod.metadata.labels, ...podLabels(pod) },
    annotations: { ...pod.metadata.annotations },
    ...(portMappings.length ? { portMappings } : {}),
    linux: sandboxLinux(pod),
  };
}

/** What a container is to its pod: an init container, one of its containers, or an ephemeral container added to it later. */
export type ContainerRole = 'init' | 'regular' | 'ephemeral';

/** The pod's ephemeral containers in the shape of its containers (they have the same fields, fewer of them allowed). */
export function ephemeralContainers(pod: Pod): Container[] {
  return (pod.spec.ephemeralContainers ?? []) as Container[];
}

export function containerConfig(pod: Pod, container: Container, attempt: number, role: ContainerRole, settings: ContainerSettings): ContainerConfig {
  return {
    metadata: { name: container.name, attempt },
    image: { image: container.image ?? '' },
    ...(settings.command ? { command: settings.command } : {}),
    ...(settings.args ? { args: settings.args } : {}),
    ...(container.workingDir ? { workingDir: String(container.workingDir) } : {}),
    envs: [...settings.env].map(([key, value]) => ({ key, value })),
    mounts: settings.mounts,
    labels: {
      ...{},
      ...podLabels(pod),
      [CRI_LABELS.CONTAINER_NAME]: container.name,
      [CRI_LABELS.CONTAINER_ROLE]: role,
      [CRI_LABELS.RESTART_POLICY]: container.restartPolicy ?? pod.spec.restartPolicy ?? 'Always',
    },
    annotations: {
      'io.kubernetes.container.restartCount': String(attempt),
      ...(container.terminationMessagePath ? { 'io.kubernetes.container.terminationMessagePath': String(container.terminationMessagePath) } : {}),
      ...(container.terminationMessagePolicy ? { 'io.kubernetes.container.terminationMessagePolicy': String(container.terminationMessagePolicy) } : {}),
    },
    logPath: containerLogPath(container.name, attempt),
    ...(container.stdin ? { stdin: true } : {}),
    ...(container.stdinOnce ? { stdinOnce: true } : {}),
    ...(container.tty ? { tty: true } : {}),
    linux: {
      resources: containerResources(pod, container, settings.memoryCapacity),
      securityContext: containerSecurityContext(pod, container),
    },
  };
}
