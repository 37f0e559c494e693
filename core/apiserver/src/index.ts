export { default, type ApiServerPluginOptions, type ApiServerInfo } from './plugin.js';
export { ApiServer, APISERVER_NAME, type ApiServerOptions } from './server.js';
export type { ApiExtensions, ExtensionHandler, ExtensionRequest, ExtensionResponse } from './extensions.js';
export type { DelegatedApi, DiscoveredResource } from './discovery/delegated.js';
export { forward as forwardRequest, type BackendTls, type ForwardOptions } from './proxy/forward.js';
export { ResourceRegistryImpl } from './registry/resource-registry.js';
export { InitializerRegistryImpl } from './registry/initializer-registry.js';
export { HttpServer, type HttpServerOptions, type ConnectionLimits } from './http/server.js';
export { serverUrl } from './kubeconfig.js';
export {
  ensurePki,
  readClusterCa,
  issueClientCertificate,
  writeCertificateFiles,
  CLIENT_CERTIFICATE_DEFAULT_SECONDS,
  type Pki,
  type ClusterCa,
  type ClientCertificateRequest,
  type IssuedCertificate,
} from './pki.js';
export { SYSTEM_NAMESPACES } from './bootstrap.js';
export { AUTHENTICATION_CONFIGMAP, publishAuthenticationConfig } from './authentication-configmap.js';
export { GIT_VERSION, KUBERNETES_MAJOR, KUBERNETES_MINOR } from './discovery/version.js';
export { APISERVER_ERRORS, ApiServerError, type ApiServerErrorCode } from './errors.js';
