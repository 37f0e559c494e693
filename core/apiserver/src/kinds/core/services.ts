// Services and the Endpoints that back them.
import { defineKind, RESOURCES, type Endpoints, type Service, type StatusCause } from '@skiff/api';
import { fieldErrors, validateImmutable } from '@skiff/api/validation';
import { AGE_COLUMN, column, computed } from '../columns.js';

function defaultService(service: Service): void {
  const spec = (service.spec ??= {});
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  if (spec.type !== 'ExternalName') {
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.internalTrafficPolicy ??= 'Cluster';
  }
  if ((spec.type === 'NodePort' || spec.type === 'LoadBalancer') && spec.externalTrafficPolicy === undefined) spec.externalTrafficPolicy = 'Cluster';
  for (const port of spec.ports ?? []) {
    port.protocol ??= 'TCP';
    if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === '') port.targetPort = port.port;
  }
}

function validateService(service: Service, old?: Service): StatusCause[] {
  const spec = service.spec ?? {};
  const causes: StatusCause[] = [];
  const ports = spec.ports ?? [];
  if (spec.type !== 'ExternalName' && ports.length === 0 && spec.clusterIP !== 'None') causes.push(fieldErrors.required('spec.ports'));
  if (spec.type === 'ExternalName' && !spec.externalName) causes.push(fieldErrors.required('spec.externalName'));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const at = `spec.ports[${i}]`;
    if (ports.length > 1 && !port.name) causes.push(fieldErrors.required(`${at}.name`));
    if (port.name) {
      if (names.has(port.name)) causes.push(fieldErrors.duplicate(`${at}.name`, port.name));
      names.add(port.name);
    }
    if (port.port === undefined) causes.push(fieldErrors.required(`${at}.port`));
    else if (port.port < 1 || port.port > 65535) causes.push(fieldErrors.invalid(`${at}.port`, port.port, 'must be between 1 and 65535, inclusive'));
    if (typeof port.targetPort === 'number' && (port.targetPort < 1 || port.targetPort > 65535)) {
      causes.push(fieldErrors.invalid(`${at}.targetPort`, port.targetPort, 'must be between 1 and 65535, inclusive'));
    }
    if (port.nodePort !== undefined && spec.type === 'ClusterIP')
      causes.push(fieldErrors.forbidden(`${at}.nodePort`, "may not be used when `type` is 'ClusterIP'"));
  });
  if (old) {
    const before = old.spec ?? {};
    // An allocated cluster IP stays; only ExternalName services (which have none) may set or drop one.
    if (before.clusterIP && spec.type !== 'ExternalName' && before.type !== 'ExternalName')
      causes.push(...validateImmutable(spec.clusterIP ?? '', before.clusterIP, 'spec.clusterIP'));
  }
  return causes;
}

function servicePorts(service: Service): string {
  const ports = service.spec?.ports ?? [];
  if (ports.length === 0) return '<none>';
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

function serviceExternalIP(service: Service): string {
  const spec = service.spec ?? {};
  const external = spec.externalIPs ?? [];
  switch (spec.type) {
    case 'ExternalName':
      return spec.externalName ?? '<none>';
    case 'LoadBalancer': {
      const ingress = (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter(Boolean);
      const all = [...ingress, ...external];
      return all.length ? all.join(',') : '<pending>';
    }
    default:
      return external.length ? external.join(',') : '<none>';
  }
}

export const services = defineKind<Service>({
  ...{},
  ...RESOURCES.services,
  subresources: ['status', 'proxy'],
  names: 'dns-label',
  columns: [
    column('Type', '.spec.type'),
    computed<Service>('Cluster-IP', (s) => s.spec?.clusterIP || '<none>'),
    computed<Service>('External-IP', serviceExternalIP),
    computed<Service>('Port(s)', servicePorts),
    AGE_COLUMN,
    computed<Service>(
      'Selector',
      (s) =>
        Object.entries(s.spec?.selector ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .sort()
          .join(',') || '<none>',
      { priority: 1 },
    ),
  ],
  strategy: { defaults: defaultService, validate: validateService },
});

/** The first three addresses (with their ports), then how many more. */
function endpointsCell(endpoints: Endpoints): string {
  const all: string[] = [];
  for (const subset of endpoints.subsets ?? []) {
    const ports = subset.ports?.length ? subset.ports.map((p) => p.port) : [undefined];
    for (const address of subset.addresses ?? []) for (const port of ports) all.push(port ? `${address.ip}:${port}` : `${address.ip}`);
  }
  if (all.length === 0) return '<none>';
  return all.length > 3 ? `${all.slice(0, 3).join(',')} + ${all.length - 3} more...` : all.join(',');
}

export const endpoints = defineKind<Endpoints>({
  ...{},
  ...RESOURCES.endpoints,
  singular: 'endpoints',
  columns: [computed<Endpoints>('Endpoints', endpointsCell), AGE_COLUMN],
});
