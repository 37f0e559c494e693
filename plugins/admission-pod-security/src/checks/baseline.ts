// The baseline level of the Pod Security Standards: what a pod may not do even when nobody asked for hardening.
// Reasons and details are worded as kube-apiserver words them, since users search for them.
import type { PodSpec } from '@skiff/api';
import { containersPhrase, plural, quoted, sortedSet } from '../format.js';
import { allContainers, exceptUserNamespaced, namesOf, type CheckDefinition, type PodCheck, type Violation } from './types.js';

/** `pod and containers "a", "b"`: who set a forbidden value. */
export function settersPhrase(podSetsIt: boolean, containers: readonly string[]): string {
  const setters = podSetsIt ? ['pod'] : [];
  if (containers.length > 0) setters.push(containersPhrase(containers));
  return setters.join(' and ');
}

const hostProcess: PodCheck = ({ spec }) => {
  const pod = spec.securityContext?.windowsOptions?.hostProcess === true;
  const containers = namesOf(spec, (c) => c.securityContext?.windowsOptions?.hostProcess === true);
  if (!pod && containers.length === 0) return undefined;
  return { reason: 'hostProcess', detail: `${settersPhrase(pod, containers)} must not set securityContext.windowsOptions.hostProcess=true` };
};

const hostNamespaces: PodCheck = ({ spec }) => {
  const shared = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((field) => spec[field] === true).map((field) => `${field}=true`);
  return shared.length ? { reason: 'host namespaces', detail: shared.join(', ') } : undefined;
};

const privileged: PodCheck = ({ spec }) => {
  const containers = namesOf(spec, (c) => c.securityContext?.privileged === true);
  if (containers.length === 0) return undefined;
  return { reason: 'privileged', detail: `${containersPhrase(containers)} must not set securityContext.privileged=true` };
};

/** The capabilities a container runtime grants by default; adding any other one is forbidden. */
export const DEFAULT_CAPABILITIES: ReadonlySet<string> = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

const capabilities: PodCheck = ({ spec }) => {
  const containers: string[] = [];
  const added: string[] = [];
  for (const container of allContainers(spec)) {
    const extra = (container.securityContext?.capabilities?.add ?? []).filter((capability) => !DEFAULT_CAPABILITIES.has(capability));
    if (extra.length === 0) continue;
    containers.push(container.name);
    added.push(...extra);
  }
  if (containers.length === 0) return undefined;
  return {
    reason: 'non-default capabilities',
    detail: `${containersPhrase(containers)} must not include ${quoted(sortedSet(added))} in securityContext.capabilities.add`,
  };
};

const hostPathVolumes: PodCheck = ({ spec }) => {
  const volumes = (spec.volumes ?? []).filter((volume) => volume.hostPath).map((volume) => volume.name);
  if (volumes.length === 0) return undefined;
  return { reason: 'hostPath volumes', detail: `${plural(volumes.length, 'volume', 'volumes')} ${quoted(volumes)}` };
};

const hostPorts: PodCheck = ({ spec }) => {
  const containers: string[] = [];
  const ports: string[] = [];
  for (const container of allContainers(spec)) {
    const used = (container.ports ?? []).filter((port) => port.hostPort).map((port) => String(port.hostPort));
    if (used.length === 0) continue;
    containers.push(container.name);
    ports.push(...used);
  }
  if (containers.length === 0) return undefined;
  const distinct = sortedSet(ports);
  return {
    reason: 'hostPort',
    detail: `${containersPhrase(containers)} ${plural(containers.length, 'uses', 'use')} ${plural(distinct.length, 'hostPort', 'hostPorts')} ${distinct.join(', ')}`,
  };
};

interface HostHandler {
  httpGet?: { host?: string };
  tcpSocket?: { host?: string };
}

const hostsOf = (handler: HostHandler | undefined): string[] => [handler?.httpGet?.host, handler?.tcpSocket?.host].filter((host): host is string => !!host);

const probeAndLifecycleHosts: PodCheck = ({ spec }) => {
  const containers: string[] = [];
  const hosts: string[] = [];
  for (const container of allContainers(spec)) {
    const handlers: (HostHandler | undefined)[] = [
      container.livenessProbe,
      container.readinessProbe,
      container.startupProbe,
      container.lifecycle?.postStart,
      container.lifecycle?.preStop,
    ];
    const used = handlers.flatMap(hostsOf);
    if (used.length === 0) continue;
    containers.push(container.name);
    hosts.push(...used);
  }
  if (containers.length === 0) return undefined;
  const names = sortedSet(containers);
  const distinct = sortedSet(hosts);
  return {
    reason: 'probe or lifecycle host',
    detail: `${containersPhrase(names)} ${plural(names.length, 'uses', 'use')} ${plural(distinct.length, 'probe or lifecycle host', 'probe or lifecycle hosts')} ${quoted(distinct)}`,
  };
};

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const APPARMOR_TYPES: ReadonlySet<string> = new Set(['RuntimeDefault', 'Localhost']);
const allowedAppArmorAnnotation = (value: string) => value === '' || value === 'runtime/default' || value.startsWith('localhost/');

const appArmor: PodCheck = ({ metadata, spec }) => {
  const values: string[] = [];
  const forbiddenType = (profile: { type?: string } | undefined) => {
    if (!profile || APPARMOR_TYPES.has(profile.type ?? '')) return false;
    values.push(profile.type ?? '');
    return true;
  };
  const pod = forbiddenType(spec.securityContext?.appArmorProfile);
  const containers = namesOf(spec, (c) => forbiddenType(c.securityContext?.appArmorProfile));
  const annotations = Object.entries(metadata.annotations ?? {})
    .filter(([key, value]) => key.startsWith(APPARMOR_ANNOTATION_PREFIX) && !allowedAppArmorAnnotation(value))
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .sort();
  const setters = settersPhrase(pod, containers);
  const who = annotations.length ? [setters, plural(annotations.length, 'annotation', 'annotations')].filter(Boolean).join(' and ') : setters;
  if (!who) return undefined;
  const listed = [...sortedSet(values), ...annotations];
  return {
    reason: plural(listed.length, 'forbidden AppArmor profile', 'forbidden AppArmor profiles'),
    detail: `${who} must not set AppArmor profile type to ${quoted(listed)}`,
  };
};

/** SELinux types a container may ask for; 1.31 added container_engine_t. */
const SELINUX_TYPES_1_0 = ['', 'container_t', 'container_init_t', 'container_kvm_t'];
const SELINUX_TYPES_1_31 = [...SELINUX_TYPES_1_0, 'container_engine_t'];

function seLinuxOptions(allowedTypes: readonly string[]): PodCheck {
  const allowed = new Set(allowedTypes);
  return ({ spec }) => {
    const types: string[] = [];
    let user = false;
    let role = false;
    const forbidden = (options: { type?: string; user?: string; role?: string } | undefined) => {
      if (!options) return false;
      let bad = false;
      if (!allowed.has(options.type ?? '')) {
        types.push(options.type ?? '');
        bad = true;
      }
      if (options.user) bad = user = true;
      if (options.role) bad = role = true;
      return bad;
    };
    const pod = forbidden(spec.securityContext?.seLinuxOptions);
    const containers = namesOf(spec, (c) => forbidden(c.securityContext?.seLinuxOptions));
    if (!pod && containers.length === 0) return undefined;
    const distinct = sortedSet(types);
    const what = [
      ...(distinct.length ? [`${plural(distinct.length, 'type', 'types')} ${quoted(distinct)}`] : []),
      ...(user ? ['user may not be set'] : []),
      ...(role ? ['role may not be set'] : []),
    ];
    return { reason: 'seLinuxOptions', detail: `${settersPhrase(pod, containers)} set forbidden securityContext.seLinuxOptions: ${what.join('; ')}` };
  };
}

export const unmaskedProcMount: PodCheck = ({ spec }) => {
  const kinds: string[] = [];
  const containers = namesOf(spec, (c) => {
    const procMount = c.securityContext?.procMount;
    if (procMount === undefined || procMount === null || procMount === 'Default') return false;
    kinds.push(procMount);
    return true;
  });
  if (containers.length === 0) return undefined;
  return { reason: 'procMount', detail: `${containersPhrase(containers)} must not set securityContext.procMount to ${quoted(sortedSet(kinds))}` };
};

/** Seccomp profile types that keep a filter in place. */
export const allowedSeccompType = (type: string | undefined): boolean => type === 'RuntimeDefault' || type === 'Localhost';

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const allowedSeccompAnnotation = (value: string) => value === 'runtime/default' || value === 'docker/default' || value.startsWith('localhost/');

/** Before 1.19 seccomp was chosen by annotations. */
const seccompAnnotations: PodCheck = ({ metadata, spec }) => {
  const annotations = metadata.annotations ?? {};
  const keys = [SECCOMP_POD_ANNOTATION, ...allContainers(spec).map((c) => SECCOMP_CONTAINER_ANNOTATION_PREFIX + c.name)];
  const forbidden = sortedSet(
    keys
      .filter((key) => annotations[key] !== undefined && !allowedSeccompAnnotation(annotations[key]!))
      .map((key) => `${key}=${JSON.stringify(annotations[key])}`),
  );
  if (forbidden.length === 0) return undefined;
  return { reason: 'seccompProfile', detail: `forbidden ${plural(forbidden.length, 'annotation', 'annotations')} ${forbidden.join(', ')}` };
};

/** Explicitly forbidden seccomp types (Unconfined…) on the pod or its containers; undefined when none. */
export function forbiddenSeccompTypes(spec: PodSpec): Violation | undefined {
  const values: string[] = [];
  const forbidden = (profile: { type?: string } | undefined) => {
    if (!profile || allowedSeccompType(profile.type)) return false;
    values.push(profile.type ?? '');
    return true;
  };
  const pod = forbidden(spec.securityContext?.seccompProfile);
  const containers = namesOf(spec, (c) => forbidden(c.securityContext?.seccompProfile));
  if (!pod && containers.length === 0) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `${settersPhrase(pod, containers)} must not set securityContext.seccompProfile.type to ${quoted(sortedSet(values))}`,
  };
}

const seccompFields: PodCheck = ({ spec }) => forbiddenSeccompTypes(spec);

/** The sysctls that only affect the pod itself, by the policy version that first allowed them. */
const SAFE_SYSCTLS: readonly (readonly [number, readonly string[]])[] = [
  [
    0,
    ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'],
  ],
  [27, ['net.ipv4.ip_local_reserved_ports']],
  [29, ['net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']],
  [32, ['net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']],
];

/** The safe sysctls at policy version 1.`minor`. */
export const safeSysctls = (minor: number): ReadonlySet<string> => new Set(SAFE_SYSCTLS.filter(([since]) => since <= minor).flatMap(([, names]) => names));

function sysctls(minor: number): PodCheck {
  const safe = safeSysctls(minor);
  return ({ spec }) => {
    const forbidden = (spec.securityContext?.sysctls ?? []).map((sysctl) => sysctl.name).filter((name) => !safe.has(name));
    return forbidden.length ? { reason: 'forbidden sysctls', detail: forbidden.join(', ') } : undefined;
  };
}

export const BASELINE_CHECKS: readonly CheckDefinition[] = [
  { id: 'appArmorProfile', level: 'baseline', revisions: [{ since: 0, check: appArmor }] },
  { id: 'capabilities_baseline', level: 'baseline', revisions: [{ since: 0, check: capabilities }] },
  { id: 'hostNamespaces', level: 'baseline', revisions: [{ since: 0, check: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', revisions: [{ since: 0, check: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', revisions: [{ since: 0, check: hostPorts }] },
  { id: 'hostProbesAndHostLifecycle', level: 'baseline', revisions: [{ since: 34, check: probeAndLifecycleHosts }] },
  { id: 'privileged', level: 'baseline', revisions: [{ since: 0, check: privileged }] },
  {
    id: 'procMount',
    level: 'baseline',
    revisions: [
      { since: 0, check: unmaskedProcMount },
      { since: 35, check: exceptUserNamespaced(unmaskedProcMount) },
    ],
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    revisions: [
      { since: 0, check: seLinuxOptions(SELINUX_TYPES_1_0) },
      { since: 31, check: seLinuxOptions(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    revisions: [
      { since: 0, check: seccompAnnotations },
      { since: 19, check: seccompFields },
    ],
  },
  { id: 'sysctls', level: 'baseline', revisions: SAFE_SYSCTLS.map(([since]) => ({ since, check: sysctls(since) })) },
  { id: 'windowsHostProcess', level: 'baseline', revisions: [{ since: 0, check: hostProcess }] },
];
