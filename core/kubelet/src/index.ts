import { kubeletPlugin } from './plugin.js';

export default kubeletPlugin;
export { kubeletPlugin, collectNodePlugins } from './plugin.js';
export { Kubelet, type KubeletConfig, type KubeletServing, type NodeCredentials } from './kubelet.js';
export { kubeletOptionsSchema, type KubeletPluginOptions } from './options.js';
export { PodRuntimeManager, type PodObservation, type ContainerObservation, type PodRuntimeOptions } from './pods/pod-runtime.js';
export { PodWorkers, type PodWorkersOptions } from './pods/pod-workers.js';
export { KubeletMetrics, RUNTIME_OPERATION_TYPES, POD_START_BUCKETS, type RuntimeOperationSeries } from './metrics.js';
export { buildPodStatus, rejectedPodStatus, sameStatus, type PodOutcome, type StatusContext } from './pods/pod-status.js';
export { qosClass } from './pods/qos.js';
export { NodeRegistration } from './node/node-registration.js';
export { NodeLease } from './node/node-lease.js';
export { desiredNode, type NodeCapacity, type NodeDescription } from './node/node-object.js';
export { NameRegistry } from './registry.js';
export { KubeletError, KUBELET_ERRORS, KUBELET_ERROR_STATUS, type KubeletErrorCode } from './errors.js';
export { NodeConnectionRegistry } from './streaming/node-connections.js';
export { KubeletNodeConnection, type KubeletNodeConnectionOptions } from './streaming/node-connection.js';
export { readContainerLog, type ContainerLogSource, type FollowTiming } from './streaming/container-log.js';
export { parseCriLogLine, type CriLogEntry } from './streaming/cri-log.js';
export { PLUGIN_NAME, KUBELET_VERSION, NODE_LEASE_NAMESPACE, CRI_LABELS } from './names.js';
export {
  certificateUsable,
  newKeyAndRequest,
  requestCertificate,
  requestNodeClientCertificate,
  SIGNERS,
  type CertificateRequestOptions,
  type CertificateSubject,
} from './certificates/request.js';
export { KubeletServer, KUBELET_PORT, type KubeletServerOptions, type KubeletServerTls } from './server/index.js';
export { UsageSampler, type UsageSamplerOptions } from './stats/sampler.js';
export { cpuRate, resourceUsageOf, type ContainerSamples, type CpuRate, type SamplePair, type UsageSnapshot } from './stats/usage.js';
