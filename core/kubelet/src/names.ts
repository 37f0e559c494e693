/** The kubelet host plugin's package name, used for every tap it makes. */
export const PLUGIN_NAME = '@skiff/kubelet';

/** What nodes report as their kubelet version (kubectl get nodes: VERSION). */
export const KUBELET_VERSION = 'v1.36.0-skiff';

/** The event source component (kubectl describe: "From kubelet"). */
export const KUBELET_COMPONENT = 'kubelet';

/** Where node heartbeats (Leases) live, as in Kubernetes. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** Labels the CRI side uses to find a pod's sandboxes and containers again (Kubernetes' own keys). */
export const CRI_LABELS = Object.freeze({
  POD_NAME: 'io.kubernetes.pod.name',
  POD_NAMESPACE: 'io.kubernetes.pod.namespace',
  POD_UID: 'io.kubernetes.pod.uid',
  CONTAINER_NAME: 'io.kubernetes.container.name',
  /** `init` or `regular`; the simulated runtime runs init containers to completion. */
  CONTAINER_ROLE: 'skiff.io/container-role',
  /** The pod's `restartPolicy` (`Always` when unset): a simulated runtime lets containers of run-to-completion pods exit. */
  RESTART_POLICY: 'skiff.io/pod-restart-policy',
});

/**
 * How often the kubelet lists the runtime's containers to notice the ones that exited by themselves (the
 * generic PLEG's relist period in Kubernetes).
 */
export const CONTAINER_RELIST_MS = 1000;

/** How often the kubelet removes the folders of pods it no longer has (Kubernetes' housekeeping). */
export const HOUSEKEEPING_MS = 10_000;

/** The network interface every pod gets. */
export const POD_INTERFACE = 'eth0';

/**
 * The folder under a simulated node's data dir that stands in for its root file system: hostPath volumes and
 * PersistentVolume paths are made there, never on the machine (no container would see them anyway).
 */
export const SIMULATED_HOST_ROOT = 'host';
