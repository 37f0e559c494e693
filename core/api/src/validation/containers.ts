// Containers and init containers of a pod spec (validateContainers / validateInitContainers).
import type { Container, ContainerPort, EphemeralContainer, StatusCause } from '../types.js';
import { child, duplicate, forbidden, index, invalid, notFound, notSupported, required } from './field.js';
import { isDNS1123Label, isEnvVarName, isValidPortName, isValidPortNumber } from './names.js';
import { validateResourceRequirements } from './resources.js';

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const LIFECYCLE_FIELDS = ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const;

interface VolumeMount {
  name?: string;
  mountPath?: string;
}

function validatePorts(ports: ContainerPort[] | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  (ports ?? []).forEach((port, i) => {
    const path = index(field, i);
    if (port.name) {
      const problems = isValidPortName(port.name);
      if (problems.length) causes.push(...problems.map((message) => invalid(child(path, 'name'), port.name, message)));
      else if (names.has(port.name)) causes.push(duplicate(child(path, 'name'), port.name));
      else names.add(port.name);
    }
    if (!port.containerPort) causes.push(required(child(path, 'containerPort')));
    else causes.push(...isValidPortNumber(port.containerPort).map((message) => invalid(child(path, 'containerPort'), port.containerPort, message)));
    if (port.hostPort) causes.push(...isValidPortNumber(port.hostPort).map((message) => invalid(child(path, 'hostPort'), port.hostPort, message)));
    if (!port.protocol) causes.push(required(child(path, 'protocol')));
    else if (!PORT_PROTOCOLS.includes(port.protocol)) causes.push(notSupported(child(path, 'protocol'), port.protocol, PORT_PROTOCOLS));
  });
  return causes;
}

function validateEnv(env: Container['env'], field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  (env ?? []).forEach((variable, i) => {
    const path = child(index(field, i), 'name');
    if (!variable.name) causes.push(required(path));
    causes.push(...isEnvVarName(variable.name ?? '').map((message) => invalid(path, variable.name ?? '', message)));
  });
  return causes;
}

function validateVolumeMounts(mounts: VolumeMount[] | undefined, volumes: Set<string>, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const mountPoints = new Set<string>();
  (mounts ?? []).forEach((mount, i) => {
    const path = index(field, i);
    const name = mount.name ?? '';
    const mountPath = mount.mountPath ?? '';
    if (!name) causes.push(required(child(path, 'name')));
    if (!volumes.has(name)) causes.push(notFound(child(path, 'name'), name));
    if (!mountPath) causes.push(required(child(path, 'mountPath')));
    if (mountPoints.has(mountPath)) causes.push(invalid(child(path, 'mountPath'), mountPath, 'must be unique'));
    mountPoints.add(mountPath);
  });
  return causes;
}

function validatePullPolicy(policy: string | undefined, field: string): StatusCause[] {
  if (!policy) return [required(field)];
  return PULL_POLICIES.includes(policy) ? [] : [notSupported(field, policy, PULL_POLICIES)];
}

/** validateContainerCommon: what regular and init containers share. */
function validateContainer(container: Container, volumes: Set<string>, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const namePath = child(path, 'name');
  if (!container.name) causes.push(required(namePath));
  else causes.push(...isDNS1123Label(container.name).map((message) => invalid(namePath, container.name, message)));
  if (!container.image) causes.push(required(child(path, 'image')));
  const policy = container.terminationMessagePolicy as string | undefined;
  if (!policy) causes.push(required(child(path, 'terminationMessagePolicy')));
  else if (!TERMINATION_MESSAGE_POLICIES.includes(policy))
    causes.push(notSupported(child(path, 'terminationMessagePolicy'), policy, TERMINATION_MESSAGE_POLICIES));
  causes.push(...validatePorts(container.ports, child(path, 'ports')));
  causes.push(...validateEnv(container.env, child(path, 'env')));
  causes.push(...validateVolumeMounts(container.volumeMounts, volumes, child(path, 'volumeMounts')));
  causes.push(...validatePullPolicy(container.imagePullPolicy, child(path, 'imagePullPolicy')));
  causes.push(...validateResourceRequirements(container.resources, child(path, 'resources')));
  return causes;
}

/** Host ports may not collide: "<protocol>/<hostIP>/<port>" must be unique across the given containers. */
function checkHostPortConflicts(containers: Container[], field: string, offset = 0): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  containers.forEach((container, i) => {
    (container.ports ?? []).forEach((port, j) => {
      if (!port.hostPort) return;
      const id = `${port.protocol ?? ''}/${(port as { hostIP?: string }).hostIP ?? ''}/${port.hostPort}`;
      if (seen.has(id)) causes.push(duplicate(child(index(child(index(field, i + offset), 'ports'), j), 'hostPort'), id));
      seen.add(id);
    });
  });
  return causes;
}

export function validateContainers(containers: Container[] | undefined, volumes: Set<string>, field: string): StatusCause[] {
  if (!containers || containers.length === 0) return [required(field)];
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  containers.forEach((container, i) => {
    const path = index(field, i);
    causes.push(...validateContainer(container, volumes, path));
    if (names.has(container.name)) causes.push(duplicate(child(path, 'name'), container.name));
    else names.add(container.name);
    if (container.restartPolicy !== undefined) causes.push(forbidden(child(path, 'restartPolicy'), 'may not be set for non-init containers'));
  });
  causes.push(...checkHostPortConflicts(containers, field));
  return causes;
}

/** Init containers: names unique across all containers; only sidecars (restartPolicy Always) may have probes. */
export function validateInitContainers(
  containers: Container[] | undefined,
  regular: Container[] | undefined,
  volumes: Set<string>,
  field: string,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set((regular ?? []).map((c) => c.name));
  (containers ?? []).forEach((container, i) => {
    const path = index(field, i);
    causes.push(...validateContainer(container, volumes, path));
    const restartPolicy = container.restartPolicy as string | undefined;
    if (restartPolicy !== undefined && restartPolicy !== 'Always') causes.push(notSupported(child(path, 'restartPolicy'), restartPolicy, ['Always']));
    if (names.has(container.name)) causes.push(duplicate(child(path, 'name'), container.name));
    else if (container.name) names.add(container.name);
    causes.push(...checkHostPortConflicts([container], field, i));
    if (restartPolicy !== 'Always') {
      for (const name of LIFECYCLE_FIELDS) {
        if (container[name] !== undefined) causes.push(forbidden(child(path, name), 'may not be set for init containers without restartPolicy=Always'));
      }
    }
  });
  return causes;
}

/** What an ephemeral container may not have: it joins a running pod for debugging, with no ports, probes, lifecycle or resources. */
const EPHEMERAL_FORBIDDEN_FIELDS = [
  'ports',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'resources',
  'resizePolicy',
  'restartPolicy',
] as const satisfies readonly (keyof EphemeralContainer)[];

/** New ephemeral containers: valid containers, named uniquely across every container of the pod, targeting one that exists. */
export function validateEphemeralContainers(
  containers: EphemeralContainer[] | undefined,
  others: Container[],
  volumes: Set<string>,
  field: string,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set(others.map((c) => c.name));
  (containers ?? []).forEach((container, i) => {
    const path = index(field, i);
    causes.push(...validateContainer(container, volumes, path));
    if (names.has(container.name)) causes.push(duplicate(child(path, 'name'), container.name));
    else if (container.name) names.add(container.name);
    for (const name of EPHEMERAL_FORBIDDEN_FIELDS) {
      const value = container[name];
      const empty = value === undefined || (typeof value === 'object' && value !== null && Object.keys(value).length === 0);
      if (!empty) causes.push(forbidden(child(path, name), 'cannot be set for an Ephemeral Container'));
    }
    const target = container.targetContainerName;
    if (target && !others.some((c) => c.name === target)) causes.push(notFound(child(path, 'targetContainerName'), target));
  });
  return causes;
}
