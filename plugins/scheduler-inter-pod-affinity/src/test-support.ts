import type { Node, Pod, PodAffinityTerm, WeightedPodAffinityTerm } from '@skiff/api';
import type { NodeInfo, SchedulerPlugin } from '@skiff/kernel';
import { addPodToNodeInfo, buildProfile, createNodeInfo, PluginRegistry, schedulePod, type ProfileConfig, type ScheduleResult } from '@skiff/scheduler';
import { createInterPodAffinity } from './inter-pod-affinity.js';

export const HOSTNAME = 'kubernetes.io/hostname';
export const ZONE = 'topology.kubernetes.io/zone';

/** A ready node labelled with its hostname, plus `labels` (a zone…). */
export function node(name: string, labels: Record<string, string> = {}): Node {
  return {
    metadata: { name, labels: { [HOSTNAME]: name, ...labels } },
    status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

export interface PodShape {
  namespace?: string;
  nodeName?: string;
  affinity?: PodAffinityTerm[];
  antiAffinity?: PodAffinityTerm[];
  preferredAffinity?: WeightedPodAffinityTerm[];
  preferredAntiAffinity?: WeightedPodAffinityTerm[];
}

export function pod(name: string, labels: Record<string, string>, shape: PodShape = {}): Pod {
  const { namespace = 'default', nodeName, affinity, antiAffinity, preferredAffinity, preferredAntiAffinity } = shape;
  const podAffinity =
    affinity || preferredAffinity
      ? { requiredDuringSchedulingIgnoredDuringExecution: affinity, preferredDuringSchedulingIgnoredDuringExecution: preferredAffinity }
      : undefined;
  const podAntiAffinity =
    antiAffinity || preferredAntiAffinity
      ? { requiredDuringSchedulingIgnoredDuringExecution: antiAffinity, preferredDuringSchedulingIgnoredDuringExecution: preferredAntiAffinity }
      : undefined;
  return {
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, labels },
    spec: {
      containers: [{ name: 'main', image: 'nginx' }],
      ...(nodeName ? { nodeName } : {}),
      ...(podAffinity || podAntiAffinity ? { affinity: { ...(podAffinity && { podAffinity }), ...(podAntiAffinity && { podAntiAffinity }) } } : {}),
    },
  };
}

/** A term selecting pods labelled `app=<app>` within `topologyKey`. */
export function term(app: string, topologyKey: string, extra: Partial<PodAffinityTerm> = {}): PodAffinityTerm {
  return { labelSelector: { matchLabels: { app } }, topologyKey, ...extra };
}

export function weighted(weight: number, podAffinityTerm: PodAffinityTerm): WeightedPodAffinityTerm {
  return { weight, podAffinityTerm };
}

/** A profile with only this plugin (and its args, as a KubeSchedulerConfiguration profile passes them). */
export function profileWith(plugin: SchedulerPlugin = createInterPodAffinity(), config: ProfileConfig = {}) {
  const registry = new PluginRegistry();
  registry.register(plugin);
  return buildProfile(registry, config);
}

/** The cluster: node infos built from nodes and the pods bound to them. */
export function cluster(nodes: Node[], pods: Pod[] = []): NodeInfo[] {
  return nodes.map((n) =>
    createNodeInfo(
      n,
      pods.filter((p) => p.spec.nodeName === n.metadata.name),
    ),
  );
}

/** Schedules `incoming` and, when it fits, binds it there (as the scheduler's cache assumes it). */
export function scheduleAndBind(profile: ReturnType<typeof profileWith>, incoming: Pod, nodes: NodeInfo[]): ScheduleResult {
  const result = schedulePod(profile, new Map(), incoming, nodes, () => 0);
  if (result.nodeName) {
    incoming.spec.nodeName = result.nodeName;
    addPodToNodeInfo(nodes.find((info) => info.node.metadata.name === result.nodeName)!, incoming);
  }
  return result;
}
