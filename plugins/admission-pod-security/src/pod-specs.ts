import type { Container, EphemeralContainer, KubeObject, Pod, PodTemplateSpec } from '@skiff/api';
import type { PodView } from './checks/index.js';

type TemplateOf = (object: KubeObject) => PodTemplateSpec | undefined;

const specTemplate: TemplateOf = (object) => (object as { spec?: { template?: PodTemplateSpec } }).spec?.template;

/**
 * The resources that carry a pod template, keyed `<resource>.<group>` (core: `<resource>.`): their template is
 * checked in audit and warn modes only, since the pods made from it are checked (and enforced) when created.
 */
export const WORKLOAD_TEMPLATES: ReadonlyMap<string, TemplateOf> = new Map<string, TemplateOf>([
  ['podtemplates.', (object) => (object as { template?: PodTemplateSpec }).template],
  ['replicationcontrollers.', specTemplate],
  ['replicasets.apps', specTemplate],
  ['deployments.apps', specTemplate],
  ['statefulsets.apps', specTemplate],
  ['daemonsets.apps', specTemplate],
  ['jobs.batch', specTemplate],
  ['cronjobs.batch', (object) => (object as { spec?: { jobTemplate?: { spec?: { template?: PodTemplateSpec } } } }).spec?.jobTemplate?.spec?.template],
]);

/** A workload's pod template as the checks read it; undefined when it has none (an optional template left out). */
export function templateView(template: PodTemplateSpec | undefined): PodView | undefined {
  if (!template?.spec) return undefined;
  return { metadata: template.metadata ?? {}, spec: template.spec };
}

export const podView = (pod: Pod): PodView => ({ metadata: pod.metadata, spec: pod.spec ?? { containers: [] } });

/**
 * Whether a pod update can change what the policy decides. A pod's spec is immutable but for container images and
 * added ephemeral containers, so only those are looked at (as kube-apiserver does); label, annotation and
 * status changes pass unchecked.
 */
export function isSignificantPodUpdate(pod: Pod, old: Pod): boolean {
  const spec = pod.spec ?? { containers: [] };
  const oldSpec = old.spec ?? { containers: [] };
  if (imagesDiffer(spec.containers ?? [], oldSpec.containers ?? [])) return true;
  if (imagesDiffer(spec.initContainers ?? [], oldSpec.initContainers ?? [])) return true;
  const oldEphemeral = new Map((oldSpec.ephemeralContainers ?? []).map((container) => [container.name, container]));
  return (spec.ephemeralContainers ?? []).some((container) => oldEphemeral.get(container.name)?.image !== container.image || !oldEphemeral.has(container.name));
}

function imagesDiffer(containers: readonly (Container | EphemeralContainer)[], old: readonly (Container | EphemeralContainer)[]): boolean {
  return containers.length !== old.length || containers.some((container, i) => container.image !== old[i]!.image);
}
