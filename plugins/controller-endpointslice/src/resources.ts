import type { KubeObject, ObjectReference, ResourceType } from '@skiff/api';

/** The resource types the endpoint controllers read and write (the built-in RESOURCES table names fewer). */
export const SERVICES: ResourceType = Object.freeze({ group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true });
export const ENDPOINTS: ResourceType = Object.freeze({ group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints', namespaced: true });
export const ENDPOINT_SLICES: ResourceType = Object.freeze({
  group: 'discovery.k8s.io',
  version: 'v1',
  resource: 'endpointslices',
  kind: 'EndpointSlice',
  namespaced: true,
});

export interface ServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}

export interface Service extends KubeObject {
  spec?: {
    type?: string;
    selector?: Record<string, string> | null;
    ports?: ServicePort[];
    clusterIP?: string;
    clusterIPs?: string[];
    ipFamilies?: string[];
    publishNotReadyAddresses?: boolean;
    [field: string]: unknown;
  };
}

export type AddressType = 'IPv4' | 'IPv6';

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface SliceEndpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  nodeName?: string;
  zone?: string;
  targetRef?: ObjectReference;
  [field: string]: unknown;
}

export interface SlicePort {
  name?: string;
  protocol?: string;
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice extends KubeObject {
  addressType: string;
  endpoints?: SliceEndpoint[] | null;
  ports?: SlicePort[] | null;
}
