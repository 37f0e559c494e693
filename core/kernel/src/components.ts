import type { Kernel } from './kernel.js';
import type { ResolvedConfig } from './config.js';
import type { ApiHandler } from './types/transport.js';
import type { InitializerRegistry, ResourceRegistry } from './types/apiserver.js';
import type { Logger } from './types/logger.js';
import type { NodeConnections } from './types/kubelet.js';
import type { Registry } from './metrics.js';
import type { Tracer } from './tracing/tracer.js';

/** What the API server reports once it listens (`apiServerInfo`). */
export interface ApiServerInfo {
  url: string;
  host: string;
  port: number;
  caPem: string;
  caFile: string;
  /** The CA's key, for plugins that issue client certificates (x509 authentication). */
  caKeyFile: string;
}

/**
 * A credential for the admin kubeconfig, provided by whichever authenticator can issue one: a bearer token, or a
 * client certificate (PEM) with its key.
 */
export interface AdminCredential {
  token?: string;
  username?: string;
  certPem?: string;
  keyPem?: string;
}

/**
 * The shared components a kernel holds, by name: what `kernel.provide` registers and `kernel.resolve`
 * returns, typed. A package that provides a component of its own adds it here by declaration merging:
 *
 * ```ts
 * declare module '@skiff/kernel' {
 *   interface Components { store: Store }
 * }
 * ```
 *
 * The contracts several packages share (the request handler, the registries, the API server's address,
 * the admin credential) are declared here, in the kernel, so that neither side depends on the other.
 */
export interface Components {
  kernel: Kernel;
  logger: Logger;
  config: ResolvedConfig;
  /** The kernel's Prometheus registry: components add their metrics to it (see `counter`, `gauge`, `histogram`). */
  metrics: Registry;
  /** The kernel's trace recorder (see docs/tracing.md). */
  tracer: Tracer;
  /** The API server's request pipeline, for in-process clients (the loopback transport). */
  apiHandler: ApiHandler;
  apiServerInfo: ApiServerInfo;
  resourceRegistry: ResourceRegistry;
  initializerRegistry: InitializerRegistry;
  adminCredential: AdminCredential;
  /** The cluster IPs of the `kubernetes` Service (the first address of each service range): the API server's certificate names them. */
  kubernetesServiceIPs: readonly string[];
  /** How the API server reaches each node's kubelet (pod logs, exec, attach, port-forward); the kubelet provides it. */
  nodeConnections: NodeConnections;
}

export type ComponentName = keyof Components & string;
