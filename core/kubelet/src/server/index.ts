export { KubeletServer, KUBELET_PORT, type KubeletServerOptions, type KubeletServerTls } from './kubelet-server.js';
export {
  KubeletAuth,
  KUBELET_AUTH_CACHE_DEFAULTS,
  kubeletAccess,
  kubeletSubresource,
  kubeletVerb,
  type KubeletAccess,
  type KubeletAuthCacheTtls,
  type KubeletAuthOptions,
} from './auth.js';
export { statsSummary, type StatsSummary, type PodStats } from './summary.js';
