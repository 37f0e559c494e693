export const PLUGIN_NAME = '@skiff/plugin-cri-containerd';

/** The name nodes pick this runtime by (kubelet option `runtime`), and the containerID scheme. */
export const RUNTIME_NAME = 'containerd';

/** The folder of a node's data folder that holds its containerd's configuration, content and log. */
export const NODE_FOLDER = 'containerd';

/** containerd's namespace for everything the CRI plugin makes (what `ctr -n k8s.io` shows). */
export const CRI_NAMESPACE = 'k8s.io';

/**
 * The CNI plugin containerd's CRI runs for each sandbox. containerd always runs CNI when it makes a pod's
 * network namespace; Skiff's kubelet attaches the pod with its own network plugin instead, so the one plugin
 * containerd is given makes no change and only reports the interface name.
 */
export const NETNS_ONLY_CNI = 'skiff-netns-only';
