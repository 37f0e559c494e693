// The core group (`/api/v1`): one declaration per kind.
import {
  defaultNamespace,
  defaultNode,
  defaultPod,
  defaultPodTemplate,
  defineKind,
  fieldErrors,
  humanAge,
  restoreField,
  validateEvent,
  validateImmutable,
  validateNamespace,
  validateNode,
  validatePod,
  validatePodTemplateSpec,
  type Event,
  type KubeObject,
  type Namespace,
  type Node,
  type Pod,
  type PodTemplateSpec,
  type ResourceDefinition,
  type StatusCause,
} from '@skiff/api';
import { AGE_COLUMN, column, computed, NAME_COLUMN, selectorCell, templateColumns } from './columns.js';
import { selectorField } from './field-selectors.js';
import { podQOSClass } from './pod-qos.js';
import { podCells, POD_COLUMNS } from './pod-table.js';

/** The finalizer the namespace controller removes once everything in the namespace is gone. */
export const NAMESPACE_FINALIZER = 'kubernetes';

const DEFAULT_POD_GRACE_SECONDS = 30;

type Object_ = KubeObject & Record<string, unknown>;
const record = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' ? (value as Record<string, unknown>) : {});
const count = (value: unknown): number => Object.keys(record(value)).length;

// ---- pods -----------------------------------------------------------------------------------------------

const podField = selectorField<Pod>;

export const pods = defineKind({
  group: '',
  version: 'v1',
  kind: 'Pod',
  resource: 'pods',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  subresources: ['status', 'binding', 'eviction', 'log', 'exec', 'attach', 'portforward', 'ephemeralcontainers', 'resize'],
  keptOnStatusUpdate: ['deletionTimestamp', 'ownerReferences'],
  table: { columns: POD_COLUMNS, cells: podCells },
  strategy: {
    defaults: (object) => defaultPod(object as Pod),
    validateAll(object, old, subresource) {
      const causes = validatePod(object as Pod, old as Pod | undefined, subresource);
      if (subresource === 'resize' && old && podQOSClass(object as Pod) !== podQOSClass(old as Pod))
        causes.push(fieldErrors.forbidden('spec', 'Pod QOS Class may not change as a result of resizing'));
      return causes;
    },
    prepareForCreate(object) {
      object.status = { phase: 'Pending', conditions: [], qosClass: podQOSClass(object as Pod) };
    },
    prepareForUpdate: (object, old, subresource) => keepPodSpecPart(object as Pod, old as Pod, subresource),
    fieldSelectors: {
      'spec.nodeName': podField((p) => p.spec?.nodeName),
      'spec.restartPolicy': podField((p) => p.spec?.restartPolicy),
      'spec.schedulerName': podField((p) => p.spec?.schedulerName),
      'spec.serviceAccountName': podField((p) => p.spec?.serviceAccountName as string | undefined),
      'spec.hostNetwork': podField((p) => Boolean(p.spec?.hostNetwork)),
      'status.phase': podField((p) => p.status?.phase),
      'status.podIP': podField((p) => p.status?.podIPs?.[0]?.ip ?? p.status?.podIP),
      'status.nominatedNodeName': podField((p) => (p.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName),
    },
    // A pod bound to a node winds down on it (its kubelet finishes with a grace-0 delete); unbound and finished pods go at once.
    deletionGracePeriod(object, requested) {
      const pod = object as Pod;
      if (!pod.spec?.nodeName || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return 0;
      return requested ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS;
    },
  },
});

/**
 * What each way of updating a pod may change in its spec: the pod itself everything but the ephemeral
 * containers, pods/ephemeralcontainers only those, pods/resize only the containers' resources and resize policies.
 */
function keepPodSpecPart(pod: Pod, old: Pod, subresource: string): void {
  const spec = pod.spec;
  if (!spec || !old.spec) return;
  if (subresource === '') {
    if (old.spec.ephemeralContainers === undefined) delete spec.ephemeralContainers;
    else spec.ephemeralContainers = old.spec.ephemeralContainers;
  } else if (subresource === 'ephemeralcontainers') {
    pod.spec = { ...structuredClone(old.spec), ...(spec.ephemeralContainers ? { ephemeralContainers: spec.ephemeralContainers } : {}) };
    if (!spec.ephemeralContainers) delete pod.spec.ephemeralContainers;
  } else if (subresource === 'resize') {
    const next = structuredClone(old.spec);
    for (const container of next.containers ?? []) {
      const requested = spec.containers?.find((c) => c.name === container.name) as (typeof container & { resizePolicy?: unknown }) | undefined;
      if (!requested) continue;
      if (requested.resources === undefined) delete container.resources;
      else container.resources = requested.resources;
      const policy = requested.resizePolicy;
      if (policy === undefined) delete (container as { resizePolicy?: unknown }).resizePolicy;
      else (container as { resizePolicy?: unknown }).resizePolicy = policy;
    }
    pod.spec = next;
  }
}

// ---- namespaces -----------------------------------------------------------------------------------------

export const namespaces = defineKind({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  resource: 'namespaces',
  namespaced: false,
  shortNames: ['ns'],
  subresources: ['status', 'finalize'],
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  names: 'dns-label',
  columns: [column('Status', '.status.phase'), AGE_COLUMN],
  strategy: {
    defaults: (object) => defaultNamespace(object as Namespace),
    validateAll: (object, old) => validateNamespace(object as Namespace, old as Namespace | undefined),
    prepareForCreate(object) {
      const namespace = object as Namespace;
      namespace.status = { phase: 'Active' };
      const finalizers = namespace.spec?.finalizers ?? [];
      namespace.spec = { ...namespace.spec, finalizers: finalizers.includes(NAMESPACE_FINALIZER) ? finalizers : [...finalizers, NAMESPACE_FINALIZER] };
    },
    // spec.finalizers change only through the finalize subresource.
    prepareForUpdate(object, old, subresource) {
      if (subresource === '') restoreField(((object as Namespace).spec ??= {}), (old as Namespace).spec ?? {}, 'finalizers');
    },
    fieldSelectors: { 'status.phase': selectorField<Namespace>((ns) => ns.status?.phase) },
    deletionFinalizers: (object) => (object as Namespace).spec?.finalizers ?? [],
    onDeletionMarked(object) {
      (object as Namespace).status = { ...(object as Namespace).status, phase: 'Terminating' };
    },
  },
});

// ---- nodes ----------------------------------------------------------------------------------------------

const ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';
const LEGACY_ROLE_LABEL = 'kubernetes.io/role';

/** Roles from `node-role.kubernetes.io/<role>` labels and the legacy `kubernetes.io/role`, sorted. */
function nodeRoles(node: Node): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith(ROLE_LABEL_PREFIX) && key.length > ROLE_LABEL_PREFIX.length) roles.add(key.slice(ROLE_LABEL_PREFIX.length));
    else if (key === LEGACY_ROLE_LABEL && value) roles.add(value);
  }
  return [...roles].sort();
}

/** "Ready", "NotReady" or "Unknown" from the Ready condition, plus ",SchedulingDisabled" when cordoned. */
function nodeStatus(node: Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable) status.push('SchedulingDisabled');
  return status.join(',');
}

const nodeAddress = (type: string) =>
  computed<Node>(`${type === 'InternalIP' ? 'Internal' : 'External'}-IP`, (node) => node.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>', {
    priority: 1,
  });
const nodeInfo = (name: string, key: 'osImage' | 'kernelVersion' | 'containerRuntimeVersion') =>
  computed<Node>(name, (node) => node.status?.nodeInfo?.[key] || '<unknown>', { priority: 1 });

export const nodes = defineKind({
  group: '',
  version: 'v1',
  kind: 'Node',
  resource: 'nodes',
  namespaced: false,
  shortNames: ['no'],
  subresources: ['status'],
  columns: [
    computed<Node>('Status', nodeStatus),
    computed<Node>('Roles', (node) => nodeRoles(node).join(',') || '<none>'),
    AGE_COLUMN,
    computed<Node>('Version', (node) => node.status?.nodeInfo?.kubeletVersion ?? ''),
    nodeAddress('InternalIP'),
    nodeAddress('ExternalIP'),
    nodeInfo('OS-Image', 'osImage'),
    nodeInfo('Kernel-Version', 'kernelVersion'),
    nodeInfo('Container-Runtime', 'containerRuntimeVersion'),
  ],
  strategy: {
    defaults: (object) => defaultNode(object as Node),
    validateAll: (object, old) => validateNode(object as Node, old as Node | undefined),
    prepareForCreate() {},
    fieldSelectors: { 'spec.unschedulable': selectorField<Node>((node) => Boolean(node.spec?.unschedulable)) },
  },
});

// ---- events ---------------------------------------------------------------------------------------------

/** "pod/web-1": the involved object's kind in lower case and its name. */
function eventTarget(event: Event): string {
  const kind = (event.involvedObject?.kind ?? '').toLowerCase();
  return event.involvedObject?.name ? `${kind}/${event.involvedObject.name}` : kind;
}

/** "kubelet, node-1": the reporting component and host (or instance). */
function eventSource(event: Event): string {
  const component = event.source?.component || event.reportingComponent || '';
  const instance = event.source?.host || event.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

const firstSeen = (event: Event, now: number) => humanAge(event.firstTimestamp || event.eventTime, now);

const involved = (field: keyof Event['involvedObject']) => selectorField<Event>((e) => e.involvedObject?.[field]);

export const events = defineKind({
  group: '',
  version: 'v1',
  kind: 'Event',
  resource: 'events',
  namespaced: true,
  shortNames: ['ev'],
  columns: [
    computed<Event>('Last Seen', (event, now) =>
      event.series ? humanAge(event.series.lastObservedTime, now) : event.lastTimestamp ? humanAge(event.lastTimestamp, now) : firstSeen(event, now),
    ),
    column('Type', '.type'),
    column('Reason', '.reason'),
    computed<Event>('Object', eventTarget),
    computed<Event>('Subobject', (event) => event.involvedObject?.fieldPath ?? '', { priority: 1 }),
    computed<Event>('Source', eventSource, { priority: 1 }),
    computed<Event>('Message', (event) => (event.message ?? '').trim()),
    computed<Event>('First Seen', firstSeen, { priority: 1 }),
    computed<Event>('Count', (event) => (event.series ? (event.series.count ?? 0) : event.count || 1), { priority: 1 }),
    { ...NAME_COLUMN, priority: 1 },
  ],
  strategy: {
    validateAll: (object, old) => validateEvent(object as Event, old as Event | undefined),
    fieldSelectors: {
      'involvedObject.kind': involved('kind'),
      'involvedObject.namespace': involved('namespace'),
      'involvedObject.name': involved('name'),
      'involvedObject.uid': involved('uid'),
      'involvedObject.apiVersion': involved('apiVersion'),
      'involvedObject.resourceVersion': involved('resourceVersion'),
      'involvedObject.fieldPath': involved('fieldPath'),
      reason: selectorField<Event>((e) => e.reason),
      reportingComponent: selectorField<Event>((e) => e.reportingComponent),
      source: selectorField<Event>((e) => e.source?.component),
      type: selectorField<Event>((e) => e.type),
    },
  },
});

// ---- configmaps and secrets -----------------------------------------------------------------------------

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** IsConfigMapKey: the keys of data and binaryData. */
function validateKeys(object: Object_, fields: string[]): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  for (const field of fields) {
    for (const key of Object.keys(record(object[field]))) {
      const problems: string[] = [];
      if (key.length > 253) problems.push('must be no more than 253 characters');
      if (!CONFIG_KEY.test(key))
        problems.push(
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        );
      if (key === '.' || key === '..') problems.push(`must not be '${key}'`);
      for (const problem of problems) causes.push(fieldErrors.invalid(`${field}[${key}]`, key, problem));
      if (seen.has(key)) causes.push(fieldErrors.invalid(`${field}[${key}]`, key, 'duplicate of key present in data'));
      seen.add(key);
    }
  }
  return causes;
}

const MAX_DATA_BYTES = 1024 * 1024;

/** The data of an immutable ConfigMap or Secret never changes, and it never becomes mutable again. */
function validateImmutableData(object: Object_, old: Object_ | undefined, fields: string[]): StatusCause[] {
  if (!old || old.immutable !== true) return [];
  const causes: StatusCause[] = [];
  if (object.immutable !== true) causes.push(fieldErrors.forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const field of fields) {
    if (JSON.stringify(object[field] ?? {}) !== JSON.stringify(old[field] ?? {}))
      causes.push(fieldErrors.forbidden(field, 'field is immutable when `immutable` is set'));
  }
  return causes;
}

export const configMaps = defineKind({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  resource: 'configmaps',
  namespaced: true,
  shortNames: ['cm'],
  columns: [computed<Object_>('Data', (cm) => count(cm.data) + count(cm.binaryData), { type: 'integer' }), AGE_COLUMN],
  strategy: {
    validate(object, old) {
      const cm = object as Object_;
      const size = JSON.stringify(cm.data ?? {}).length + JSON.stringify(cm.binaryData ?? {}).length;
      return [
        ...validateKeys(cm, ['data', 'binaryData']),
        ...(size > MAX_DATA_BYTES ? [fieldErrors.tooLong('', MAX_DATA_BYTES)] : []),
        ...validateImmutableData(cm, old as Object_ | undefined, ['data', 'binaryData']),
      ];
    },
  },
});

/** The keys each built-in Secret type must hold. */
const SECRET_TYPE_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
};

export const secrets = defineKind({
  group: '',
  version: 'v1',
  kind: 'Secret',
  resource: 'secrets',
  namespaced: true,
  columns: [column('Type', '.type'), computed<Object_>('Data', (secret) => count(secret.data), { type: 'integer' }), AGE_COLUMN],
  strategy: {
    // stringData is write-only: merged into data (base64) and dropped, as Kubernetes' conversion does.
    defaults(object) {
      const secret = object as Object_;
      secret.type ??= 'Opaque';
      if (secret.stringData && typeof secret.stringData === 'object') {
        const data = { ...record(secret.data) };
        for (const [key, value] of Object.entries(record(secret.stringData))) data[key] = Buffer.from(String(value), 'utf8').toString('base64');
        secret.data = data;
      }
      delete secret.stringData;
    },
    validate(object, old) {
      const secret = object as Object_;
      const causes = validateKeys(secret, ['data']);
      const type = String(secret.type ?? '');
      for (const key of SECRET_TYPE_KEYS[type] ?? []) if (!Object.hasOwn(record(secret.data), key)) causes.push(fieldErrors.required(`data[${key}]`));
      if (type === 'kubernetes.io/service-account-token' && !secret.metadata.annotations?.['kubernetes.io/service-account.name']) {
        causes.push(fieldErrors.required('metadata.annotations[kubernetes.io/service-account.name]'));
      }
      if (type === 'kubernetes.io/basic-auth' && !Object.hasOwn(record(secret.data), 'username') && !Object.hasOwn(record(secret.data), 'password')) {
        causes.push(fieldErrors.required('data[username]'));
      }
      if (old) causes.push(...validateImmutable(secret.type ?? '', (old as Object_).type ?? '', 'type'));
      causes.push(...validateImmutableData(secret, old as Object_ | undefined, ['data']));
      return causes;
    },
  },
});

// ---- services, endpoints, service accounts --------------------------------------------------------------

interface ServicePort {
  name?: string;
  protocol?: string;
  port?: number;
  targetPort?: number | string;
  nodePort?: number;
}
type Service = KubeObject & {
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    externalIPs?: string[];
    externalName?: string;
    ports?: ServicePort[];
    selector?: Record<string, string>;
    sessionAffinity?: string;
    ipFamilyPolicy?: string;
    ipFamilies?: string[];
    internalTrafficPolicy?: string;
    externalTrafficPolicy?: string;
  };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
};

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

function validateService(object: KubeObject, old?: KubeObject): StatusCause[] {
  const service = object as Service;
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
    const before = (old as Service).spec ?? {};
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

export const services = defineKind({
  group: '',
  version: 'v1',
  kind: 'Service',
  resource: 'services',
  namespaced: true,
  shortNames: ['svc'],
  categories: ['all'],
  subresources: ['status'],
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
  strategy: { defaults: (object) => defaultService(object as Service), validate: validateService },
});

type Endpoints = KubeObject & { subsets?: { addresses?: { ip?: string }[]; ports?: { port?: number }[] }[] };

function endpointsCell(endpoints: Endpoints): string {
  const all: string[] = [];
  for (const subset of endpoints.subsets ?? []) {
    const ports = subset.ports?.length ? subset.ports : [{}];
    for (const address of subset.addresses ?? []) for (const port of ports) all.push(port.port ? `${address.ip}:${port.port}` : `${address.ip}`);
  }
  if (all.length === 0) return '<none>';
  return all.length > 3 ? `${all.slice(0, 3).join(',')} + ${all.length - 3} more...` : all.join(',');
}

export const endpoints = defineKind({
  group: '',
  version: 'v1',
  kind: 'Endpoints',
  resource: 'endpoints',
  singular: 'endpoints',
  namespaced: true,
  shortNames: ['ep'],
  columns: [computed<Endpoints>('Endpoints', endpointsCell), AGE_COLUMN],
});

export const serviceAccounts = defineKind({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  resource: 'serviceaccounts',
  namespaced: true,
  shortNames: ['sa'],
  subresources: ['token'],
  columns: [computed<Object_>('Secrets', (sa) => (Array.isArray(sa.secrets) ? sa.secrets.length : 0), { type: 'integer' }), AGE_COLUMN],
});

// ---- quotas and limits ----------------------------------------------------------------------------------

export const limitRanges = defineKind({
  group: '',
  version: 'v1',
  kind: 'LimitRange',
  resource: 'limitranges',
  namespaced: true,
  shortNames: ['limits'],
  columns: [column('Created At', '.metadata.creationTimestamp', { type: 'date' })],
});

/** "cpu: 1/2, pods: 3/10": used over hard for the resources of one kind of limit. */
function quotaCell(quota: Object_, prefix: 'requests' | 'limits'): string {
  const hard = record(record(quota.status).hard ?? record(quota.spec).hard);
  const used = record(record(quota.status).used);
  const keys = Object.keys(hard)
    .filter((key) => (prefix === 'limits' ? key.startsWith('limits.') : !key.startsWith('limits.')))
    .sort();
  return keys.map((key) => `${key}: ${String(used[key] ?? '0')}/${String(hard[key])}`).join(', ');
}

export const resourceQuotas = defineKind({
  group: '',
  version: 'v1',
  kind: 'ResourceQuota',
  resource: 'resourcequotas',
  namespaced: true,
  shortNames: ['quota'],
  subresources: ['status'],
  columns: [AGE_COLUMN, computed<Object_>('Request', (q) => quotaCell(q, 'requests')), computed<Object_>('Limit', (q) => quotaCell(q, 'limits'))],
});

// ---- volumes --------------------------------------------------------------------------------------------

type Claim = KubeObject & {
  spec?: {
    accessModes?: string[];
    resources?: { requests?: Record<string, string> };
    volumeName?: string;
    storageClassName?: string;
    volumeMode?: string;
    volumeAttributesClassName?: string;
  };
  status?: { phase?: string; capacity?: Record<string, string>; accessModes?: string[] };
};

const ACCESS_MODE_SHORT: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
const accessModes = (modes: string[] | undefined) => (modes ?? []).map((mode) => ACCESS_MODE_SHORT[mode] ?? mode).join(',');

function validateClaim(object: KubeObject, old?: KubeObject): StatusCause[] {
  const claim = object as Claim;
  const causes: StatusCause[] = [];
  if (!claim.spec?.accessModes?.length) causes.push(fieldErrors.required('spec.accessModes', 'at least 1 access mode is required'));
  if (!claim.spec?.resources?.requests?.storage) causes.push(fieldErrors.required('spec.resources[storage]'));
  if (old) {
    // Only the requested size (to grow), the volume attributes class and a first binding may change.
    const strip = (c: Claim) => ({ ...c.spec, resources: undefined, volumeAttributesClassName: undefined, volumeName: c.spec?.volumeName || undefined });
    const before = strip(old as Claim);
    const after = strip(claim);
    if (!(old as Claim).spec?.volumeName) {
      delete after.volumeName;
      delete before.volumeName;
    }
    if (JSON.stringify(after) !== JSON.stringify(before))
      causes.push(fieldErrors.forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
  }
  return causes;
}

export const persistentVolumeClaims = defineKind({
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  resource: 'persistentvolumeclaims',
  namespaced: true,
  shortNames: ['pvc'],
  subresources: ['status'],
  columns: [
    computed<Claim>('Status', (c) => c.status?.phase ?? ''),
    computed<Claim>('Volume', (c) => c.spec?.volumeName ?? ''),
    computed<Claim>('Capacity', (c) => c.status?.capacity?.storage ?? ''),
    computed<Claim>('Access Modes', (c) => accessModes(c.status?.accessModes)),
    computed<Claim>('StorageClass', (c) => c.spec?.storageClassName ?? '<unset>'),
    computed<Claim>('VolumeAttributesClass', (c) => c.spec?.volumeAttributesClassName ?? '<unset>'),
    AGE_COLUMN,
    computed<Claim>('VolumeMode', (c) => c.spec?.volumeMode ?? 'Filesystem', { priority: 1 }),
  ],
  strategy: {
    defaults(object) {
      const claim = object as Claim;
      if (claim.spec) claim.spec.volumeMode ??= 'Filesystem';
    },
    prepareForCreate(object) {
      object.status = { phase: 'Pending' };
    },
    validate: validateClaim,
  },
});

type Volume = KubeObject & {
  spec?: Record<string, unknown> & {
    capacity?: Record<string, string>;
    accessModes?: string[];
    persistentVolumeReclaimPolicy?: string;
    claimRef?: { namespace?: string; name?: string };
    storageClassName?: string;
    volumeMode?: string;
    volumeAttributesClassName?: string;
  };
  status?: { phase?: string; reason?: string };
};

const PV_SOURCES = [
  'hostPath',
  'local',
  'nfs',
  'csi',
  'iscsi',
  'fc',
  'rbd',
  'cephfs',
  'cinder',
  'glusterfs',
  'flexVolume',
  'azureFile',
  'azureDisk',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'quobyte',
  'flocker',
  'gcePersistentDisk',
  'awsElasticBlockStore',
];

export const persistentVolumes = defineKind({
  group: '',
  version: 'v1',
  kind: 'PersistentVolume',
  resource: 'persistentvolumes',
  namespaced: false,
  shortNames: ['pv'],
  subresources: ['status'],
  columns: [
    computed<Volume>('Capacity', (v) => v.spec?.capacity?.storage ?? ''),
    computed<Volume>('Access Modes', (v) => accessModes(v.spec?.accessModes)),
    computed<Volume>('Reclaim Policy', (v) => v.spec?.persistentVolumeReclaimPolicy ?? ''),
    computed<Volume>('Status', (v) => v.status?.phase ?? ''),
    computed<Volume>('Claim', (v) => (v.spec?.claimRef?.name ? `${v.spec.claimRef.namespace}/${v.spec.claimRef.name}` : '')),
    computed<Volume>('StorageClass', (v) => v.spec?.storageClassName ?? ''),
    computed<Volume>('VolumeAttributesClass', (v) => v.spec?.volumeAttributesClassName ?? '<unset>'),
    computed<Volume>('Reason', (v) => v.status?.reason ?? ''),
    AGE_COLUMN,
    computed<Volume>('VolumeMode', (v) => v.spec?.volumeMode ?? 'Filesystem', { priority: 1 }),
  ],
  strategy: {
    defaults(object) {
      const spec = (object as Volume).spec;
      if (!spec) return;
      spec.persistentVolumeReclaimPolicy ??= 'Retain';
      spec.volumeMode ??= 'Filesystem';
    },
    prepareForCreate(object) {
      object.status = { phase: 'Pending' };
    },
    validate(object) {
      const spec = (object as Volume).spec ?? {};
      const causes: StatusCause[] = [];
      if (!spec.capacity?.storage) causes.push(fieldErrors.required('spec.capacity', 'must specify storage capacity'));
      if (!spec.accessModes?.length) causes.push(fieldErrors.required('spec.accessModes'));
      const sources = PV_SOURCES.filter((source) => spec[source] !== undefined);
      if (sources.length === 0) causes.push(fieldErrors.required('spec', 'must specify a volume type'));
      else if (sources.length > 1) causes.push(fieldErrors.forbidden(`spec.${sources[1]}`, 'may not specify more than 1 volume type'));
      return causes;
    },
  },
});

// ---- pod templates and replication controllers ----------------------------------------------------------

type PodTemplate = KubeObject & { template?: PodTemplateSpec };

export const podTemplates = defineKind({
  group: '',
  version: 'v1',
  kind: 'PodTemplate',
  resource: 'podtemplates',
  namespaced: true,
  columns: [
    computed<PodTemplate>('Containers', (t) => (t.template?.spec?.containers ?? []).map((c) => c.name).join(',')),
    computed<PodTemplate>('Images', (t) => (t.template?.spec?.containers ?? []).map((c) => c.image ?? '').join(',')),
    computed<PodTemplate>(
      'Pod Labels',
      (t) =>
        Object.entries(t.template?.metadata?.labels ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .sort()
          .join(',') || '<none>',
    ),
  ],
  strategy: {
    defaults: (object) => defaultPodTemplate((object as PodTemplate).template),
    validate: (object) => validatePodTemplateSpec((object as PodTemplate).template, 'template'),
  },
});

type ReplicationController = KubeObject & {
  spec?: { replicas?: number; selector?: Record<string, string>; template?: PodTemplateSpec };
  status?: { replicas?: number; readyReplicas?: number };
};

export const replicationControllers = defineKind({
  group: '',
  version: 'v1',
  kind: 'ReplicationController',
  resource: 'replicationcontrollers',
  namespaced: true,
  shortNames: ['rc'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  keptOnStatusUpdate: ['labels'],
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' },
  columns: [
    column('Desired', '.spec.replicas', { type: 'integer' }),
    computed<ReplicationController>('Current', (rc) => rc.status?.replicas ?? 0, { type: 'integer' }),
    computed<ReplicationController>('Ready', (rc) => rc.status?.readyReplicas ?? 0, { type: 'integer' }),
    AGE_COLUMN,
    ...templateColumns('.spec.template'),
    computed<ReplicationController>('Selector', (rc) => selectorCell({ matchLabels: rc.spec?.selector }), { priority: 1 }),
  ],
  strategy: {
    // A missing selector and labels come from the template's labels, and one replica by default.
    defaults(object) {
      const rc = object as ReplicationController;
      const spec = (rc.spec ??= {});
      const labels = spec.template?.metadata?.labels;
      if (labels && !spec.selector) spec.selector = { ...labels };
      if (labels && !rc.metadata.labels) rc.metadata.labels = { ...labels };
      spec.replicas ??= 1;
      defaultPodTemplate(spec.template);
    },
    prepareForCreate(object) {
      object.status = { replicas: 0 };
    },
    validate(object) {
      const rc = object as ReplicationController;
      const causes: StatusCause[] = [];
      const selector = rc.spec?.selector ?? {};
      if (Object.keys(selector).length === 0) causes.push(fieldErrors.required('spec.selector'));
      const labels = rc.spec?.template?.metadata?.labels ?? {};
      if (Object.entries(selector).some(([key, value]) => labels[key] !== value)) {
        causes.push(fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
      }
      if ((rc.spec?.replicas ?? 0) < 0) causes.push(fieldErrors.invalid('spec.replicas', rc.spec?.replicas, 'must be greater than or equal to 0'));
      causes.push(...validatePodTemplateSpec(rc.spec?.template, 'spec.template'));
      return causes;
    },
  },
});

// ---- component statuses and bindings --------------------------------------------------------------------

export const componentStatuses = defineKind({
  group: '',
  version: 'v1',
  kind: 'ComponentStatus',
  resource: 'componentstatuses',
  namespaced: false,
  shortNames: ['cs'],
  verbs: ['get', 'list'],
  columns: [
    computed<Object_>('Status', (cs) => {
      const healthy = (cs.conditions as { type?: string; status?: string }[] | undefined)?.find((c) => c.type === 'Healthy');
      return healthy?.status === 'True' ? 'Healthy' : 'Unhealthy';
    }),
    computed<Object_>('Message', (cs) => (cs.conditions as { message?: string }[] | undefined)?.[0]?.message ?? ''),
    computed<Object_>('Error', (cs) => (cs.conditions as { error?: string }[] | undefined)?.[0]?.error ?? ''),
  ],
});

/** POST /api/v1/namespaces/<ns>/bindings: binds the pod the Binding names (the older form of pods/binding). */
export const bindings = defineKind({
  group: '',
  version: 'v1',
  kind: 'Binding',
  resource: 'bindings',
  namespaced: true,
  verbs: ['create'],
});

/** The core group's kinds, in upstream's discovery order (alphabetical by resource). */
export const CORE_KINDS: ResourceDefinition[] = [
  bindings,
  componentStatuses,
  configMaps,
  endpoints,
  events,
  limitRanges,
  namespaces,
  nodes,
  persistentVolumeClaims,
  persistentVolumes,
  pods,
  podTemplates,
  replicationControllers,
  resourceQuotas,
  secrets,
  serviceAccounts,
  services,
];
