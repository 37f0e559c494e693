import { parseBytes, parseCpuMillis, type Container, type Pod, type PodSecurityContext, type Quantity, type SecurityContext } from '@skiff/api';
import type { ContainerConfig, LinuxContainerResources, NamespaceOptions, PodSandboxConfig } from '@skiff/kernel';
import { qosClass } from './qos.js';

/** cgroup v1 CPU shares per core, and the kernel's bounds (Kubernetes' cm.MilliCPUToShares). */
const SHARES_PER_CPU = 1024;
const MIN_SHARES = 2;
const MAX_SHARES = 262_144;
/** The CFS period the kubelet sets (100 ms, in microseconds), and the smallest quota it gives. */
export const CPU_PERIOD = 100_000;
const MIN_QUOTA = 1000;

/** OOM score adjustments by QoS class (Kubernetes' qos policy). */
export const OOM_SCORE_ADJ = Object.freeze({ GUARANTEED: -997, BEST_EFFORT: 1000 });

const podSecurity = (pod: Pod): PodSecurityContext => pod.spec.securityContext ?? {};
const containerSecurity = (container: Container): SecurityContext => container.securityContext ?? {};

/** A request, or the limit when only that is set (what the API server defaults requests to). */
function request(container: Container, resource: string): Quantity | undefined {
  return container.resources?.requests?.[resource] ?? container.resources?.limits?.[resource];
}

/** CPU shares for a request in millicores: 1024 per core, at least 2 (also for no request), at most 262144. */
export function milliCpuToShares(milliCpu: number): number {
  if (milliCpu === 0) return MIN_SHARES;
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, Math.floor((milliCpu * SHARES_PER_CPU) / 1000)));
}

/**
 * The container's OOM score adjustment: -997 for Guaranteed pods (and node-critical ones), 1000 for BestEffort,
 * and for Burstable `1000 - 1000 × memory request / node memory`, kept between 3 and 999 so Burstable
 * containers die after BestEffort and before Guaranteed ones.
 */
export function oomScoreAdjust(pod: Pod, container: Container, memoryCapacity: number): number {
  if (pod.spec.priorityClassName === 'system-node-critical') return OOM_SCORE_ADJ.GUARANTEED;
  const qos = qosClass(pod);
  if (qos === 'Guaranteed') return OOM_SCORE_ADJ.GUARANTEED;
  if (qos === 'BestEffort') return OOM_SCORE_ADJ.BEST_EFFORT;
  const memoryRequest = request(container, 'memory');
  const requested = memoryRequest === undefined ? 0 : parseBytes(memoryRequest);
  const adjust = 1000 - Math.trunc((1000 * requested) / memoryCapacity);
  if (adjust < 1000 + OOM_SCORE_ADJ.GUARANTEED) return 1000 + OOM_SCORE_ADJ.GUARANTEED;
  if (adjust === OOM_SCORE_ADJ.BEST_EFFORT) return adjust - 1;
  return adjust;
}

/**
 * The cgroup settings of a container from its requests and limits: CPU shares from the CPU request (the
 * limit when only that is set), a CFS quota over a 100 ms period from the CPU limit, the memory limit, and the
 * OOM score adjustment of its QoS class.
 */
export function containerResources(pod: Pod, container: Container, memoryCapacity: number): LinuxContainerResources {
  const cpuRequest = request(container, 'cpu');
  const cpuLimit = container.resources?.limits?.cpu;
  const memoryLimit = container.resources?.limits?.memory;
  const resources: LinuxContainerResources = { cpuShares: milliCpuToShares(cpuRequest === undefined ? 0 : parseCpuMillis(cpuRequest)) };
  const limitMillis = cpuLimit === undefined ? 0 : parseCpuMillis(cpuLimit);
  if (limitMillis > 0) {
    resources.cpuPeriod = CPU_PERIOD;
    resources.cpuQuota = Math.max(MIN_QUOTA, Math.floor((limitMillis * CPU_PERIOD) / 1000));
  }
  const memoryBytes = memoryLimit === undefined ? 0 : parseBytes(memoryLimit);
  if (memoryBytes > 0) resources.memoryLimitInBytes = memoryBytes;
  resources.oomScoreAdj = oomScoreAdjust(pod, container, memoryCapacity);
  return resources;
}

/**
 * The pod's namespaces: the node's network with hostNetwork; one process namespace per container unless
 * shareProcessNamespace (the pod's) or hostPID (the node's); the pod's IPC namespace unless hostIPC.
 */
export function namespaceOptions(pod: Pod): NamespaceOptions {
  return {
    network: pod.spec.hostNetwork ? 'NODE' : 'POD',
    pid: pod.spec.hostPID ? 'NODE' : pod.spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
    ipc: pod.spec.hostIPC ? 'NODE' : 'POD',
  };
}

type ContainerLinux = NonNullable<ContainerConfig['linux']>;

/** The container's security settings: its securityContext over the pod's (user and group), plus the pod's namespaces. */
export function containerSecurityContext(pod: Pod, container: Container): NonNullable<ContainerLinux['securityContext']> {
  const fromPod = podSecurity(pod);
  const own = containerSecurity(container);
  const runAsUser = own.runAsUser ?? fromPod.runAsUser;
  const runAsGroup = own.runAsGroup ?? fromPod.runAsGroup;
  const add = own.capabilities?.add ?? [];
  const drop = own.capabilities?.drop ?? [];
  return {
    namespaceOptions: namespaceOptions(pod),
    ...(own.privileged ? { privileged: true } : {}),
    ...(runAsUser !== undefined ? { runAsUser } : {}),
    ...(runAsGroup !== undefined ? { runAsGroup } : {}),
    // The container's processes carry the pod's supplemental groups and its fsGroup, which owns its volumes' files.
    ...(podGroups(fromPod).length ? { supplementalGroups: podGroups(fromPod) } : {}),
    ...(own.readOnlyRootFilesystem ? { readonlyRootfs: true } : {}),
    // Only an explicit `allowPrivilegeEscalation: false` sets no_new_privs, as upstream's kubelet does.
    ...(own.allowPrivilegeEscalation === false ? { noNewPrivs: true } : {}),
    ...(add.length || drop.length
      ? { capabilities: { ...{}, ...(add.length ? { addCapabilities: add } : {}), ...(drop.length ? { dropCapabilities: drop } : {}) } }
      : {}),
  };
}

/** The pod's supplemental groups, then its fsGroup, each once. */
function podGroups(security: ReturnType<typeof podSecurity>): number[] {
  return [...new Set([...(security.supplementalGroups ?? []), ...(security.fsGroup !== undefined ? [security.fsGroup] : [])])];
}

/** The sandbox's Linux settings: the pod's namespaces and sysctls, its user and groups, privileged if any container is. */
export function sandboxLinux(pod: Pod): NonNullable<PodSandboxConfig['linux']> {
  const security = podSecurity(pod);
  const privileged = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].some((container) => containerSecurity(container).privileged);
  const groups = podGroups(security);
  const sysctls = Object.fromEntries((security.sysctls ?? []).map((sysctl) => [sysctl.name, sysctl.value]));
  return {
    ...{},
    ...(Object.keys(sysctls).length ? { sysctls } : {}),
    securityContext: {
      namespaceOptions: namespaceOptions(pod),
      ...(privileged ? { privileged: true } : {}),
      ...(security.runAsUser !== undefined ? { runAsUser: security.runAsUser } : {}),
      ...(groups.length ? { supplementalGroups: groups } : {}),
    },
  };
}
