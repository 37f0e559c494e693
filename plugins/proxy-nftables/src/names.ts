export const PLUGIN_NAME = '@skiff/plugin-proxy-nftables';

/** The name kubelets pick this proxy by (kubelet option `serviceProxy`). */
export const PROXY_NAME = 'nftables';

/** The label that ties an EndpointSlice to its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** Services carrying this label belong to another proxy (upstream's convention); this one leaves them alone. */
export const SERVICE_PROXY_NAME_LABEL = 'service.kubernetes.io/service-proxy-name';

/** Upstream's default ClientIP affinity timeout (3 hours). */
export const DEFAULT_AFFINITY_SECONDS = 10_800;

/** How long a failed sync waits before the full sync that repairs it, at first and at most. */
export const RETRY_INITIAL_MS = 1_000;
export const RETRY_MAX_MS = 30_000;

/** The base objects of the table: hooked chains, the chains they jump to, and the shared maps and sets. */
export const CHAINS = Object.freeze({
  natPrerouting: 'nat-prerouting',
  natOutput: 'nat-output',
  natPostrouting: 'nat-postrouting',
  filterInput: 'filter-input',
  filterPrerouting: 'filter-prerouting',
  filterPreroutingPostDnat: 'filter-prerouting-post-dnat',
  filterOutput: 'filter-output',
  filterOutputPostDnat: 'filter-output-post-dnat',
  services: 'services',
  endpointsCheck: 'service-endpoints-check',
  nodePortEndpointsCheck: 'nodeport-endpoints-check',
  unservedCheck: 'unserved-check',
  markForMasquerade: 'mark-for-masquerade',
  masquerading: 'masquerading',
  reject: 'reject-chain',
} as const);

export const MAPS = Object.freeze({
  /** service address . protocol . port → the chain that picks an endpoint */
  serviceIPs: 'service-ips',
  /** protocol . node port → the chain of external traffic */
  serviceNodePorts: 'service-nodeports',
  /** service address . protocol . port of Services nobody can answer → reject or drop */
  noEndpointServices: 'no-endpoint-services',
  noEndpointNodePorts: 'no-endpoint-nodeports',
} as const);

export const SETS = Object.freeze({
  /** every ClusterIP, to refuse the ports they do not serve */
  clusterIPs: 'cluster-ips',
  /** the addresses NodePorts answer on (the nodes' IPs) */
  nodePortIPs: 'nodeport-ips',
  /** the service ranges, to refuse addresses no Service holds */
  serviceCIDRs: 'service-cidrs',
  /** endpoint . endpoint: a connection DNATed back to its own source (hairpin) is masqueraded */
  hairpin: 'hairpin-endpoints',
} as const);
