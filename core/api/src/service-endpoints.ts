import { isIPv6 } from 'node:net';
import { isPodReady } from './pod-state.js';
import { sameStringMap } from './string-maps.js';
import type { Pod, Service, ServicePort } from './types.js';

// Which pods back a Service, and how: the Endpoints and EndpointSlice controllers judge them by the same rules.

/** The pod's IPs, `status.podIPs` first, `status.podIP` for pods reported without the list. */
export function podIPs(pod: Pod): string[] {
  const listed = (pod.status?.podIPs ?? []).map((entry) => entry.ip).filter(Boolean);
  if (listed.length > 0) return listed;
  return pod.status?.podIP ? [pod.status.podIP] : [];
}

export const isIPv6Address = (ip: string): boolean => isIPv6(ip);

/**
 * Whether a pod belongs in a Service's endpoints at all: it has an IP, has not finished (Succeeded or
 * Failed), and — unless `includeTerminating` — is not being deleted.
 */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (podIPs(pod).length === 0) return false;
  return includeTerminating || !pod.metadata.deletionTimestamp;
}

/**
 * The pod port a service port sends traffic to: a numeric `targetPort` as is; a named one looked up among
 * the ports of the pod's containers (and of its sidecars: init containers with `restartPolicy: Always`) with
 * that name and the service port's protocol. `undefined` when the pod has no such port.
 */
export function findPort(pod: Pod, servicePort: ServicePort): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  const protocol = servicePort.protocol ?? 'TCP';
  const sidecars = (pod.spec.initContainers ?? []).filter((container) => container.restartPolicy === 'Always');
  for (const container of [...pod.spec.containers, ...sidecars]) {
    for (const port of container.ports ?? []) {
      if (port.name === target && (port.protocol ?? 'TCP') === protocol) return port.containerPort;
    }
  }
  return undefined;
}

/** A pod names itself in a Service's endpoints when its `subdomain` is the Service (in its namespace) and it sets a `hostname`. */
export function shouldSetHostname(pod: Pod, service: Service): boolean {
  return Boolean(pod.spec.hostname) && pod.spec.subdomain === service.metadata.name && pod.metadata.namespace === service.metadata.namespace;
}

/** The Service has a cluster IP (neither unset nor `None`); otherwise it counts as headless. */
export function isServiceIPSet(service: Service): boolean {
  const clusterIP = service.spec?.clusterIP ?? '';
  return clusterIP !== '' && clusterIP !== 'None';
}

/** The Service's selector, or `undefined` when it has none (it then selects nothing, not everything). */
export function serviceSelector(service: Service): Record<string, string> | undefined {
  return service.spec?.selector ?? undefined;
}

/** Whether a Service's selector (a plain label map) matches a set of labels. */
export function selectorMatches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

/** Services whose endpoints the endpoint controllers maintain: those with a selector, not of type ExternalName. */
export function isSelectingService(service: Service): boolean {
  return service.spec?.type !== 'ExternalName' && serviceSelector(service) !== undefined;
}

/** The Services among `services` that select a pod with these labels. */
export function servicesSelecting(services: readonly Service[], labels: Record<string, string> | undefined): Service[] {
  return services.filter((service) => {
    const selector = serviceSelector(service);
    return selector !== undefined && selectorMatches(selector, labels);
  });
}

/**
 * Whether a pod update can change the endpoints of the Services that select it: its deletion started,
 * its readiness, IPs, host name or subdomain changed. Label changes are judged separately.
 */
export function podEndpointsChanged(oldPod: Pod, pod: Pod): boolean {
  if (Boolean(oldPod.metadata.deletionTimestamp) !== Boolean(pod.metadata.deletionTimestamp)) return true;
  if (isPodReady(oldPod) !== isPodReady(pod)) return true;
  if (podIPs(oldPod).join(',') !== podIPs(pod).join(',')) return true;
  if (oldPod.status?.phase !== pod.status?.phase) return true;
  const before = oldPod.spec;
  const after = pod.spec;
  return before.hostname !== after.hostname || before.subdomain !== after.subdomain || oldPod.spec.nodeName !== pod.spec.nodeName;
}

/**
 * The Services to look at again after a pod event (`oldPod` undefined for an add or a delete), out of the
 * Services of the pod's namespace. An update that changes neither the pod's endpoints nor its labels
 * concerns nobody; a label change alone concerns only the Services it joined or left.
 */
export function servicesForPodEvent(services: readonly Service[], oldPod: Pod | undefined, pod: Pod): Service[] {
  if (!oldPod) return servicesSelecting(services, pod.metadata.labels);
  if (oldPod.metadata.resourceVersion === pod.metadata.resourceVersion) return [];
  const changed = podEndpointsChanged(oldPod, pod);
  if (sameStringMap(oldPod.metadata.labels, pod.metadata.labels)) return changed ? servicesSelecting(services, pod.metadata.labels) : [];
  const before = new Set(servicesSelecting(services, oldPod.metadata.labels));
  const after = new Set(servicesSelecting(services, pod.metadata.labels));
  if (changed) return [...new Set([...before, ...after])];
  return [...[...before].filter((service) => !after.has(service)), ...[...after].filter((service) => !before.has(service))];
}
