import type { APIService, Endpoints, Service } from '@skiff/api';
import type { BackendTls } from '@skiff/apiserver';
import type { FrontProxyIdentity } from './front-proxy.js';

/** What the availability check found wrong with an APIService's Service, as kube-aggregator reports it. */
export interface Unresolved {
  reason: 'ServiceNotFound' | 'ServicePortError' | 'EndpointsNotFound' | 'MissingEndpoints';
  message: string;
}

export interface Resolved {
  host: string;
  port: number;
}

/** Reads of the Services and Endpoints the aggregator watches. */
export interface ServiceLookup {
  service(namespace: string, name: string): Service | undefined;
  endpoints(namespace: string, name: string): Endpoints | undefined;
}

/**
 * An endpoint of the APIService's Service that serves its port: the Service port numbered like the APIService's,
 * the Endpoints port of the same name, one of its addresses at random. The aggregator routes to endpoints (as
 * kube-apiserver with --enable-aggregator-routing): a Service's cluster IP need not be reachable from the API server.
 */
export function resolveBackend(apiService: APIService, lookup: ServiceLookup): Resolved | Unresolved {
  const ref = apiService.spec?.service;
  const namespace = ref?.namespace ?? '';
  const name = ref?.name ?? '';
  const port = ref?.port ?? 443;
  const service = lookup.service(namespace, name);
  if (!service) return { reason: 'ServiceNotFound', message: `service/${name} in ${JSON.stringify(namespace)} is not present` };
  if (service.spec?.type === 'ExternalName' && service.spec.externalName) return { host: service.spec.externalName, port };
  const servicePort = service.spec?.ports?.find((candidate) => candidate.port === port);
  if (!servicePort) return { reason: 'ServicePortError', message: `service/${name} in ${JSON.stringify(namespace)} is not listening on port ${port}` };
  const portName = servicePort.name ?? '';
  const endpoints = lookup.endpoints(namespace, name);
  if (!endpoints) return { reason: 'EndpointsNotFound', message: `cannot find endpoints for service/${name} in ${JSON.stringify(namespace)}` };
  const candidates: Resolved[] = [];
  for (const subset of endpoints.subsets ?? []) {
    const endpointPort = subset.ports?.find((candidate) => (candidate.name ?? '') === portName);
    if (!endpointPort) continue;
    for (const address of subset.addresses ?? []) candidates.push({ host: address.ip, port: endpointPort.port });
  }
  if (candidates.length === 0) {
    return {
      reason: 'MissingEndpoints',
      message: `endpoints for service/${name} in ${JSON.stringify(namespace)} have no addresses with port name ${JSON.stringify(portName)}`,
    };
  }
  return candidates[Math.floor(Math.random() * candidates.length)]!;
}

export function isResolved(result: Resolved | Unresolved): result is Resolved {
  return 'host' in result;
}

/** How to reach the backend over TLS: its caBundle (or no verification when insecureSkipTLSVerify), the front proxy's certificate. */
export function backendTls(apiService: APIService, identity: FrontProxyIdentity): BackendTls {
  const ref = apiService.spec?.service;
  const caBundle = apiService.spec?.caBundle;
  return {
    insecure: apiService.spec?.insecureSkipTLSVerify === true,
    ...(caBundle ? { ca: Buffer.from(caBundle, 'base64').toString('utf8') } : {}),
    cert: identity.certPem,
    key: identity.keyPem,
    servername: `${ref?.name ?? ''}.${ref?.namespace ?? ''}.svc`,
  };
}
