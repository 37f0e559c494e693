import type { OptionsOf, OptionsSchema } from '@skiff/kernel';

export const kubeletOptionsSchema = {
  type: 'object',
  properties: {
    nodes: { type: 'integer', minimum: 0, description: 'nodes to run in this process (default: config.nodes; 1 with `kubeconfig`)' },
    kubeconfig: {
      type: 'string',
      default: '',
      description:
        "talk to the API server this kubeconfig names, with its credentials (a node that joined from another machine), instead of this process's API server; '' for this process's",
    },
    servers: {
      type: 'array',
      items: { type: 'string', pattern: '^https://' },
      default: [],
      description:
        "with `kubeconfig`: every API server of the cluster (same CA), to fail over between when one cannot be reached; [] for the kubeconfig's own server",
    },
    nodeName: {
      type: 'string',
      default: '',
      pattern: '^$|^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$',
      description: "the one node's name with `kubeconfig` (default: this machine's host name)",
    },
    port: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
      default: 10250,
      description:
        "the port of the kubelet's HTTPS API, which a node with `kubeconfig` serves (in-process nodes answer their API server directly); 0 picks a free one",
    },
    address: { type: 'string', default: '0.0.0.0', description: "the address the kubelet's HTTPS API listens on" },
    podCIDRSource: {
      type: 'string',
      enum: ['network', 'cluster'],
      default: 'network',
      description:
        "where a node's pod range comes from: 'network' (the pod network picks one by the node's position in this process) or 'cluster' (the kubelet registers the Node and waits for the node IPAM controller to set spec.podCIDR)",
    },
    podCIDRWaitSeconds: { type: 'number', minimum: 1, default: 120, description: "how long a node waits for the cluster's pod range before its start fails" },
    namePrefix: { type: 'string', default: 'node', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', description: 'node names are <prefix>-1 … <prefix>-N' },
    runtime: { type: 'string', default: 'simulated', description: 'container runtime name (registered through the runtimes hook)' },
    network: { type: 'string', default: 'ipam', description: 'pod network name (registered through the networks hook)' },
    capacity: {
      type: 'object',
      description: 'what each node offers',
      properties: {
        source: {
          type: 'string',
          enum: ['config', 'host'],
          default: 'config',
          description: "'config': cpu, memory and ephemeralStorage below; 'host': this machine's CPUs, memory and the data dir's file system",
        },
        cpu: { type: 'string', default: '4' },
        memory: { type: 'string', default: '8Gi' },
        ephemeralStorage: { type: 'string', default: '100Gi', description: 'local scratch space (ephemeral-storage)' },
        pods: { type: 'integer', minimum: 1, default: 110 },
      },
    },
    heartbeatSeconds: { type: 'number', minimum: 1, default: 10, description: 'lease renewal and node status period' },
    leaseDurationSeconds: { type: 'integer', minimum: 1, default: 40, description: 'the node lease duration' },
    podResyncSeconds: { type: 'number', minimum: 1, default: 30, description: 'every pod is synced again this often' },
    housekeepingSeconds: {
      type: 'number',
      minimum: 0.1,
      default: 10,
      description:
        "how often the runtime's CPU and memory figures of each container and of the node are read; usage (kubectl top) is the rate over the last two readings",
    },
    nodeIP: {
      type: 'string',
      default: '127.0.0.1',
      description:
        "the node's InternalIP (status.hostIP of its pods): an address, or 'host' for this machine's (the config's advertiseAddress, else the default route's interface)",
    },
    serviceProxy: {
      type: 'string',
      default: '',
      description: "the service proxy each node runs (registered through the serviceProxies hook); '' for none",
    },
    clusterDomain: { type: 'string', default: 'cluster.local', description: "the cluster's DNS domain (pod FQDNs in /etc/hosts, DNS search paths)" },
    clusterDNS: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description:
        "cluster DNS server addresses for dnsPolicy ClusterFirst pods; without any they get the node's resolv.conf (Default) and a MissingClusterDNS warning",
    },
    resolvConf: { type: 'string', default: '/etc/resolv.conf', description: "the node's resolver configuration, for dnsPolicy Default ('' for none)" },
    crashLoopBackoffBaseSeconds: {
      type: 'number',
      minimum: 0,
      default: 10,
      description: 'the wait before the second restart of a container that keeps exiting; it doubles with each restart',
    },
    crashLoopBackoffMaxSeconds: { type: 'number', minimum: 0, default: 300, description: 'the longest crash-loop back-off' },
    podsOnShutdown: {
      type: 'string',
      enum: ['keep', 'stop'],
      default: 'keep',
      description:
        "what a stopping kubelet does with its pods: keep them running (Kubernetes' way), or stop them and free their networks (one-machine clusters)",
    },
  },
} as const satisfies OptionsSchema;

export type KubeletPluginOptions = OptionsOf<typeof kubeletOptionsSchema>;
