// Kubernetes defaulting of the pod spec (core/v1's SetDefaults_*), which pods and every kind holding a pod
// template share: fills in what the API server adds to every object it stores, in place. Runs on create and
// update, so each default only fills a gap. A kind's own defaults live with the kind in the API server.
import type { Container, Pod, PodSpec, PodTemplateSpec } from './types.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Sets a field that is unset (absent, null or the empty string, Go's zero value for strings). */
function fill<T extends object, K extends keyof T>(target: T, key: K, value: T[K]): void {
  const current: unknown = target[key];
  if (current === undefined || current === null || current === '') target[key] = value;
}

/** `Always` for a `:latest` or untagged image, `IfNotPresent` otherwise (a digest counts as pinned). */
export function defaultImagePullPolicy(image: string | undefined): 'Always' | 'IfNotPresent' {
  const ref = image ?? '';
  const at = ref.indexOf('@');
  const name = at >= 0 ? ref.slice(0, at) : ref;
  const colon = name.lastIndexOf(':');
  const tag = colon > name.lastIndexOf('/') ? name.slice(colon + 1) : '';
  const effectiveTag = tag === '' && at < 0 ? 'latest' : tag;
  return effectiveTag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultHandler(handler: unknown): void {
  if (!isObject(handler) || !isObject(handler.httpGet)) return;
  fill(handler.httpGet, 'path', '/');
  fill(handler.httpGet, 'scheme', 'HTTP');
}

function defaultProbe(probe: unknown): void {
  if (!isObject(probe)) return;
  fill(probe, 'timeoutSeconds', 1);
  fill(probe, 'periodSeconds', 10);
  fill(probe, 'successThreshold', 1);
  fill(probe, 'failureThreshold', 3);
  defaultHandler(probe);
}

function defaultContainer(container: Container): void {
  fill(container, 'terminationMessagePath', '/dev/termination-log');
  fill(container, 'terminationMessagePolicy', 'File');
  fill(container, 'imagePullPolicy', defaultImagePullPolicy(container.image));
  // Go always writes the resources struct, so an unset one reads back as {}.
  if (!isObject(container.resources)) container.resources = {};
  for (const port of container.ports ?? []) fill(port as unknown as Json, 'protocol', 'TCP');
  for (const variable of container.env ?? []) {
    const valueFrom = variable.valueFrom;
    if (isObject(valueFrom) && isObject(valueFrom.fieldRef)) fill(valueFrom.fieldRef, 'apiVersion', 'v1');
  }
  for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) defaultProbe(probe);
  if (isObject(container.lifecycle)) {
    defaultHandler(container.lifecycle.postStart);
    defaultHandler(container.lifecycle.preStop);
  }
}

/** The permission bits file-projecting volumes get when they name none: 0644. */
const DEFAULT_MODE = 0o644;
const MODE_SOURCES = ['secret', 'configMap', 'downwardAPI', 'projected'];

function defaultVolume(volume: Json): void {
  const sources = Object.keys(volume).filter((k) => k !== 'name' && volume[k] !== undefined && volume[k] !== null);
  if (sources.length === 0) volume.emptyDir = {};
  for (const source of MODE_SOURCES) if (isObject(volume[source])) fill(volume[source] as Json, 'defaultMode', DEFAULT_MODE);
  if (isObject(volume.hostPath) && volume.hostPath.type === undefined) volume.hostPath.type = '';
}

/**
 * v1's deprecated `serviceAccount` is an alias of `serviceAccountName`, kept in step as v1's conversion does: it
 * is read only when `serviceAccountName` is empty, and always written back as a copy of it.
 */
function mirrorServiceAccount(spec: PodSpec): void {
  if (!spec.serviceAccountName && typeof spec.serviceAccount === 'string' && spec.serviceAccount) spec.serviceAccountName = spec.serviceAccount;
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  else delete spec.serviceAccount;
}

/** SetDefaults_PodSpec and the defaults of everything inside it: shared by pods and pod templates. */
export function defaultPodSpec(spec: PodSpec): void {
  fill(spec, 'dnsPolicy', 'ClusterFirst');
  fill(spec, 'restartPolicy', 'Always');
  if (!isObject(spec.securityContext)) spec.securityContext = {};
  fill(spec, 'terminationGracePeriodSeconds', 30);
  fill(spec, 'schedulerName', 'default-scheduler');
  mirrorServiceAccount(spec);
  const ephemeral = Array.isArray(spec.ephemeralContainers) ? (spec.ephemeralContainers as Container[]) : [];
  for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...ephemeral]) defaultContainer(container);
  if (Array.isArray(spec.volumes)) for (const volume of spec.volumes) if (isObject(volume)) defaultVolume(volume);
}

export function defaultPodTemplate(template: PodTemplateSpec | undefined): void {
  if (template?.spec) defaultPodSpec(template.spec);
}

/** Requests default to limits for any resource that has a limit but no request (pods only, not templates). */
function defaultRequestsFromLimits(container: Container): void {
  const limits = container.resources?.limits;
  if (!limits) return;
  const requests = (container.resources!.requests ??= {});
  for (const [name, quantity] of Object.entries(limits)) if (requests[name] === undefined) requests[name] = quantity;
}

/** SetDefaults_Pod: the pod spec defaults plus what only a Pod (not a template) gets. */
export function defaultPod(pod: Pod): void {
  if (!pod.spec) return;
  defaultPodSpec(pod.spec);
  const containers = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])];
  for (const container of containers) defaultRequestsFromLimits(container);
  fill(pod.spec, 'enableServiceLinks', true);
  if (pod.spec.hostNetwork) {
    for (const container of containers) for (const port of container.ports ?? []) if (!port.hostPort) port.hostPort = port.containerPort;
  }
}
