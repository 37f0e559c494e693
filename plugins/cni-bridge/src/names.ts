export const PLUGIN_NAME = '@skiff/plugin-cni-bridge';

/** The name nodes pick this network by (kubelet option `network`). */
export const NETWORK_NAME = 'bridge';

/** The CNI spec version of the configurations we hand the plugins (Debian's 1.1.1 binaries speak up to 1.0.0). */
export const CNI_VERSION = '1.0.0';

/** The pod interface kubelets attach (Kubernetes' eth0), used for an attachment known only by its loopback part. */
export const POD_INTERFACE = 'eth0';

/** The network the loopback plugin runs as, on its own, for `lo` (as container runtimes do). */
export const LOOPBACK_NETWORK = 'cni-loopback';

/** The plugin binaries every node needs in `binDir`. */
export const REQUIRED_PLUGINS = ['bridge', 'host-local', 'portmap', 'loopback'] as const;

/** The host tools the plugins and our cleanup call (found on PATH). */
export const REQUIRED_TOOLS = ['ip', 'bridge', 'iptables', 'iptables-save', 'iptables-restore'] as const;

/** Linux interface names hold at most 15 characters (IFNAMSIZ - 1). */
export const MAX_INTERFACE_NAME = 15;

/** How long one plugin run may take before it is killed (the bridge plugin waits for iptables' lock). */
export const PLUGIN_TIMEOUT_MS = 60_000;
