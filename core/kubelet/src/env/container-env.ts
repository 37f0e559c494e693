import { containerResourceValue, errorMessage, metadataFieldValue, type ConfigMap, type Container, type Pod, type ResourceList, type Secret } from '@skiff/api';
import { ContainerConfigError } from '../pods/container-config-error.js';
import type { PodEventSink } from '../pods/events.js';
import type { EnvSources } from './env-sources.js';
import { expand, lookupIn } from './expansion.js';
import { serviceEnvironment } from './service-env.js';

/** What the environment may say about where the pod runs. */
export interface PodPlacement {
  podIPs: string[];
  hostIPs: string[];
  /** The node's allocatable resources: a resourceFieldRef's value for a limit the container does not set. */
  allocatable?: ResourceList;
}

/** Environment variable names Kubernetes accepts (relaxed validation): printable ASCII, no `=`. */
const ENV_NAME = /^[\x20-\x3c\x3e-\x7e]+$/;

/** A pod field for `fieldRef`: the metadata fields, spec.nodeName / serviceAccountName, and the pod's and node's IPs. */
function podFieldValue(pod: Pod, fieldPath: string, placement: PodPlacement): string {
  switch (fieldPath) {
    case 'spec.nodeName':
      return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? '';
    case 'status.hostIP':
      return placement.hostIPs[0] ?? '';
    case 'status.hostIPs':
      return placement.hostIPs.join(',');
    case 'status.podIP':
      return placement.podIPs[0] ?? '';
    case 'status.podIPs':
      return placement.podIPs.join(',');
    default:
      try {
        return metadataFieldValue(pod.metadata, fieldPath);
      } catch (err) {
        throw new ContainerConfigError(errorMessage(err));
      }
  }
}

/** ConfigMaps and Secrets read once per container: `configmap "x" not found` when one is missing and needed. */
class ObjectCache {
  private readonly configMaps = new Map<string, Promise<ConfigMap | undefined>>();
  private readonly secrets = new Map<string, Promise<Secret | undefined>>();

  constructor(
    private readonly sources: EnvSources,
    private readonly namespace: string,
  ) {}

  async configMap(name: string, optional: boolean): Promise<ConfigMap | undefined> {
    if (!this.configMaps.has(name)) this.configMaps.set(name, this.sources.configMap(this.namespace, name));
    const configMap = await this.configMaps.get(name)!;
    if (!configMap && !optional) throw new ContainerConfigError(`configmap "${name}" not found`);
    return configMap;
  }

  async secret(name: string, optional: boolean): Promise<Secret | undefined> {
    if (!this.secrets.has(name)) this.secrets.set(name, this.sources.secret(this.namespace, name));
    const secret = await this.secrets.get(name)!;
    if (!secret && !optional) throw new ContainerConfigError(`secret "${name}" not found`);
    return secret;
  }
}

const decode = (value: string) => Buffer.from(value, 'base64').toString('utf8');

/**
 * A container's environment, the way the kubelet makes it: `envFrom` sources (with their prefix; invalid
 * names skipped with an InvalidEnvironmentVariableNames event), then `env` in order — values with `$(VAR)`
 * expanded against the variables declared before and the service variables, `valueFrom` resolved — then the
 * service variables nothing else set. A missing ConfigMap, Secret or key that is not optional throws a
 * ContainerConfigError with Kubernetes' message.
 */
export async function containerEnvironment(
  pod: Pod,
  container: Container,
  sources: EnvSources,
  placement: PodPlacement,
  event: PodEventSink,
): Promise<Map<string, string>> {
  const namespace = pod.metadata.namespace!;
  const objects = new ObjectCache(sources, namespace);
  const services = serviceEnvironment(await sources.services(namespace), namespace, pod.spec.enableServiceLinks !== false);
  const env = new Map<string, string>();

  for (const from of container.envFrom ?? []) {
    const reference = from.configMapRef ?? from.secretRef;
    if (!reference) continue;
    const name = reference.name ?? '';
    const kind = from.configMapRef ? 'configMap' : 'secret';
    const object = from.configMapRef ? await objects.configMap(name, reference.optional === true) : await objects.secret(name, reference.optional === true);
    if (!object) continue;
    const invalid: string[] = [];
    for (const [key, raw] of Object.entries(object.data ?? {})) {
      const variable = `${from.prefix ?? ''}${key}`;
      if (!ENV_NAME.test(variable)) invalid.push(variable);
      else env.set(variable, kind === 'secret' ? decode(raw) : raw);
    }
    if (invalid.length)
      event(
        'Warning',
        'InvalidEnvironmentVariableNames',
        `Keys [${invalid.sort().join(', ')}] from the EnvFrom ${kind} ${namespace}/${name} were skipped since they are considered invalid environment variable names.`,
      );
  }

  const lookup = lookupIn(env, services);
  for (const variable of container.env ?? []) {
    let value = variable.value ?? '';
    const from = variable.valueFrom;
    if (value !== '') value = expand(value, lookup);
    else if (from?.fieldRef) value = podFieldValue(pod, from.fieldRef.fieldPath, placement);
    else if (from?.resourceFieldRef) {
      const name = from.resourceFieldRef.containerName || container.name;
      const target = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c) => c.name === name) ?? container;
      try {
        value = containerResourceValue(from.resourceFieldRef, target, placement.allocatable);
      } catch (err) {
        throw new ContainerConfigError(errorMessage(err));
      }
    } else if (from?.configMapKeyRef) {
      const { name = '', key, optional = false } = from.configMapKeyRef;
      const configMap = await objects.configMap(name, optional);
      const found = configMap?.data?.[key];
      if (found === undefined) {
        if (optional) continue;
        throw new ContainerConfigError(`couldn't find key ${key} in ConfigMap ${namespace}/${name}`);
      }
      value = found;
    } else if (from?.secretKeyRef) {
      const { name = '', key, optional = false } = from.secretKeyRef;
      const secret = await objects.secret(name, optional);
      const found = secret?.data?.[key];
      if (found === undefined) {
        if (optional) continue;
        throw new ContainerConfigError(`couldn't find key ${key} in Secret ${namespace}/${name}`);
      }
      value = decode(found);
    }
    services.delete(variable.name);
    env.set(variable.name, value);
  }
  for (const [name, value] of services) if (!env.has(name)) env.set(name, value);
  return env;
}

/** `command` and `args` with `$(VAR)` expanded against the container's final environment. */
export function expandCommand(container: Container, env: ReadonlyMap<string, string>): { command?: string[]; args?: string[] } {
  const lookup = lookupIn(env);
  return {
    ...{},
    ...(container.command ? { command: container.command.map((part) => expand(part, lookup)) } : {}),
    ...(container.args ? { args: container.args.map((part) => expand(part, lookup)) } : {}),
  };
}
