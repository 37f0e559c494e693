import { toleratesTaint, podFitsNodeAffinity, type Node, type Pod } from '@skiff/api';
import type { PodAdmitResult, ResourceAmounts } from '@skiff/kernel';
import { addAmounts, amountsFromResourceList, emptyAmounts, podRequests } from '@skiff/scheduler';

/** The node label that names its operating system, and the one this kubelet runs. */
const OS_LABEL = 'kubernetes.io/os';
const NODE_OS = 'linux';
const EPHEMERAL_STORAGE = 'ephemeral-storage';
const ANY_ADDRESS = '0.0.0.0';

/** The status of a pod the kubelet turned away, as upstream words it: the reason, and the message with its prefix. */
function rejected(reason: string, message: string): PodAdmitResult {
  return { reason, message: `Pod was rejected: ${message}` };
}

/** A named check that failed, as upstream's kubelet reports a scheduler predicate. */
function predicateFailed(name: string): PodAdmitResult {
  return rejected(name, `Predicate ${name} failed`);
}

/** Extended resources (`example.com/gpu`) the node does not know are left to the cluster (upstream drops them at admission). */
function isExtendedResource(name: string): boolean {
  return name.includes('/') && !name.startsWith('kubernetes.io/') && !name.startsWith('requests.');
}

/** The first resource the node has too little of for the pod beside the others, as `OutOf<resource>`. */
function insufficientResource(pod: Pod, node: Node, others: readonly Pod[]): PodAdmitResult {
  const list = node.status?.allocatable ?? node.status?.capacity;
  if (!list) return undefined;
  const allocatable = amountsFromResourceList(list);
  const used = emptyAmounts();
  for (const other of others) addAmounts(used, podRequests(other));
  const request = podRequests(pod);
  const short = (resource: string, requested: number, inUse: number, capacity: number) =>
    rejected(`OutOf${resource}`, `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${inUse}, capacity: ${capacity}`);
  if (others.length + 1 > allocatable.pods) return short('pods', 1, others.length, allocatable.pods);
  if (request.milliCPU > 0 && request.milliCPU > allocatable.milliCPU - used.milliCPU)
    return short('cpu', request.milliCPU, used.milliCPU, allocatable.milliCPU);
  if (request.memory > 0 && request.memory > allocatable.memory - used.memory) return short('memory', request.memory, used.memory, allocatable.memory);
  const scalar = (amounts: ResourceAmounts, name: string) => amounts.scalar?.[name] ?? 0;
  const names = Object.keys(request.scalar ?? {}).sort((a, b) => Number(b === EPHEMERAL_STORAGE) - Number(a === EPHEMERAL_STORAGE));
  for (const name of names) {
    const wanted = scalar(request, name);
    if (wanted <= 0 || (isExtendedResource(name) && allocatable.scalar?.[name] === undefined)) continue;
    if (wanted > scalar(allocatable, name) - scalar(used, name)) return short(name, wanted, scalar(used, name), scalar(allocatable, name));
  }
  return undefined;
}

/** The host ports a pod's containers bind: address (0.0.0.0 when unset), protocol and port. */
function hostPorts(pod: Pod): { ip: string; key: string }[] {
  return pod.spec.containers.flatMap((container) =>
    (container.ports ?? [])
      .filter((port) => (port.hostPort ?? 0) > 0)
      .map((port) => ({ ip: port.hostIP || ANY_ADDRESS, key: `${port.protocol || 'TCP'}/${port.hostPort}` })),
  );
}

/** Whether the pod asks for a host port another pod holds: the same protocol and port on the same address, or either on all addresses. */
function hostPortTaken(pod: Pod, others: readonly Pod[]): boolean {
  const held = others.flatMap(hostPorts);
  return hostPorts(pod).some((wanted) =>
    held.some((taken) => taken.key === wanted.key && (taken.ip === wanted.ip || taken.ip === ANY_ADDRESS || wanted.ip === ANY_ADDRESS)),
  );
}

/**
 * The checks upstream's kubelet makes before it runs a pod bound to it, against the pods it already runs: room for
 * its requests (OutOfcpu, OutOfmemory, OutOfpods…), its node selector and required node affinity (NodeAffinity),
 * its node name (NodeName), free host ports (NodePorts), toleration of the node's NoExecute taints
 * (TaintToleration), and its operating system (PodOSSelectorNodeLabelDoesNotMatch, PodOSNotSupported).
 * Undefined when the pod may run; otherwise the first failure, as upstream reports only that one.
 */
export function generalPredicates(pod: Pod, node: Node, others: readonly Pod[]): PodAdmitResult {
  const failure =
    insufficientResource(pod, node, others) ??
    (podFitsNodeAffinity(pod.spec, node) ? undefined : predicateFailed('NodeAffinity')) ??
    (pod.spec.nodeName && pod.spec.nodeName !== node.metadata.name ? predicateFailed('NodeName') : undefined) ??
    (hostPortTaken(pod, others) ? predicateFailed('NodePorts') : undefined);
  if (failure) return failure;
  const untolerated = (node.spec?.taints ?? []).some(
    (taint) => taint.effect === 'NoExecute' && !(pod.spec.tolerations ?? []).some((toleration) => toleratesTaint(toleration, taint)),
  );
  if (untolerated) return predicateFailed('TaintToleration');
  const osLabel = pod.metadata.labels?.[OS_LABEL];
  if (osLabel !== undefined && osLabel !== NODE_OS)
    return rejected('PodOSSelectorNodeLabelDoesNotMatch', `Failed to admit pod as the \`${OS_LABEL}\` label doesn't match node label`);
  if (pod.spec.os?.name !== undefined && pod.spec.os.name !== NODE_OS)
    return rejected('PodOSNotSupported', "Failed to admit pod as the OS field doesn't match node OS");
  return undefined;
}
