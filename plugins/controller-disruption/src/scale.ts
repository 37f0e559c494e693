import {
  isApiError,
  RESOURCES,
  type CustomResourceDefinition,
  type Deployment,
  type OwnerReference,
  type Pod,
  type ReplicaSet,
  type ReplicationController,
  type ResourceType,
  type Scale,
  type StatefulSet,
} from '@skiff/api';
import { controllerRefOf } from '@skiff/controller-manager';
import type { ApiClient, ControllerContext, Informer } from '@skiff/kernel';
import { DisruptionError } from './errors.js';

/** A controller of a budget's pods, and how many pods it wants. */
interface ControllerScale {
  uid: string;
  scale: number;
}

export interface ExpectedScale {
  /** The summed scale of the controllers of the pods (each controller once). */
  expected: number;
  /** Pods without a controller: they count towards health but not towards the expected total. */
  unmanaged: string[];
}

/** The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → the core group ""). */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function refersTo(ref: OwnerReference, kind: string, groups: readonly string[]): boolean {
  return ref.kind === kind && groups.includes(groupOf(ref.apiVersion));
}

/** The built-in kinds whose objects serve `/scale`. */
const BUILTIN_SCALABLE = new Set<string>(
  [RESOURCES.deployments, RESOURCES.replicasets, RESOURCES.statefulsets, RESOURCES.replicationcontrollers].map((type) => type.resource),
);

function groupResource(type: ResourceType): string {
  return type.group ? `${type.resource}.${type.group}` : type.resource;
}

/**
 * Finds the scale of the controllers behind a budget's pods, as the disruption controller of
 * kube-controller-manager does: ReplicationControllers, Deployments (through their ReplicaSets), ReplicaSets
 * without a Deployment and StatefulSets from the caches; any other controller through its `/scale`
 * subresource — a built-in kind or a custom resource whose definition enables it.
 */
export class ControllerScales {
  private readonly rcs: Informer<ReplicationController>;
  private readonly replicaSets: Informer<ReplicaSet>;
  private readonly deployments: Informer<Deployment>;
  private readonly statefulSets: Informer<StatefulSet>;

  constructor(private readonly ctx: Pick<ControllerContext, 'client' | 'informers'>) {
    this.rcs = ctx.informers.informer<ReplicationController>(RESOURCES.replicationcontrollers);
    this.replicaSets = ctx.informers.informer<ReplicaSet>(RESOURCES.replicasets);
    this.deployments = ctx.informers.informer<Deployment>(RESOURCES.deployments);
    this.statefulSets = ctx.informers.informer<StatefulSet>(RESOURCES.statefulsets);
  }

  /** The caches these lookups read. */
  get informers(): readonly Informer[] {
    return [this.rcs, this.replicaSets, this.deployments, this.statefulSets] as readonly Informer[];
  }

  /** The expected number of pods behind `pods` (all in `namespace`); a pod whose controller cannot be found is an error. */
  async expectedScale(pods: readonly Pod[], namespace: string): Promise<ExpectedScale> {
    const scales = new Map<string, number>();
    const unmanaged: string[] = [];
    for (const pod of pods) {
      const ref = controllerRefOf(pod);
      if (!ref) {
        unmanaged.push(pod.metadata.name!);
        continue;
      }
      if (scales.has(ref.uid)) continue;
      const found = await this.find(ref, namespace);
      if (!found) throw new DisruptionError('SKIFF_ERR_DISRUPTION_NO_CONTROLLER', { pod: pod.metadata.name! });
      scales.set(found.uid, found.scale);
    }
    let expected = 0;
    for (const scale of scales.values()) expected += scale;
    return { expected, unmanaged };
  }

  private async find(ref: OwnerReference, namespace: string): Promise<ControllerScale | undefined> {
    return (
      this.replicationController(ref, namespace) ??
      this.deployment(ref, namespace) ??
      this.replicaSet(ref, namespace) ??
      this.statefulSet(ref, namespace) ??
      (await this.scaleSubresource(ref, namespace))
    );
  }

  private cached<T extends ReplicationController | ReplicaSet | Deployment | StatefulSet>(
    informer: Informer<T>,
    namespace: string,
    ref: OwnerReference,
  ): T | undefined {
    const object = informer.get(`${namespace}/${ref.name}`);
    return object?.metadata.uid === ref.uid ? object : undefined;
  }

  private replicationController(ref: OwnerReference, namespace: string): ControllerScale | undefined {
    if (!refersTo(ref, 'ReplicationController', [''])) return undefined;
    const rc = this.cached(this.rcs, namespace, ref);
    return rc && { uid: rc.metadata.uid!, scale: rc.spec?.replicas ?? 1 };
  }

  private deployment(ref: OwnerReference, namespace: string): ControllerScale | undefined {
    if (!refersTo(ref, 'ReplicaSet', ['apps', 'extensions'])) return undefined;
    const replicaSet = this.cached(this.replicaSets, namespace, ref);
    const owner = replicaSet && controllerRefOf(replicaSet);
    if (!owner || !refersTo(owner, 'Deployment', ['apps', 'extensions'])) return undefined;
    const deployment = this.cached(this.deployments, namespace, owner);
    return deployment && { uid: deployment.metadata.uid!, scale: deployment.spec?.replicas ?? 1 };
  }

  private replicaSet(ref: OwnerReference, namespace: string): ControllerScale | undefined {
    if (!refersTo(ref, 'ReplicaSet', ['apps', 'extensions'])) return undefined;
    const replicaSet = this.cached(this.replicaSets, namespace, ref);
    // A Deployment's ReplicaSet counts through its Deployment (or, when that is gone, through /scale).
    if (!replicaSet || controllerRefOf(replicaSet)?.kind === 'Deployment') return undefined;
    return { uid: replicaSet.metadata.uid!, scale: replicaSet.spec?.replicas ?? 1 };
  }

  private statefulSet(ref: OwnerReference, namespace: string): ControllerScale | undefined {
    if (!refersTo(ref, 'StatefulSet', ['apps'])) return undefined;
    const statefulSet = this.cached(this.statefulSets, namespace, ref);
    return statefulSet && { uid: statefulSet.metadata.uid!, scale: statefulSet.spec?.replicas ?? 1 };
  }

  private async scaleSubresource(ref: OwnerReference, namespace: string): Promise<ControllerScale | undefined> {
    const { type, scalable } = await this.resourceOf(ref);
    let scale: Scale;
    try {
      scale = await getScale(this.ctx.client, type, namespace, ref.name);
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
      // Not found: either no such object, or its kind has no /scale.
      if (!scalable) throw new DisruptionError('SKIFF_ERR_DISRUPTION_NO_SCALE', { resource: groupResource(type) });
      return undefined;
    }
    return scale.metadata.uid === ref.uid ? { uid: ref.uid, scale: scale.spec?.replicas ?? 0 } : undefined;
  }

  /** The resource an owner reference's kind is served as, and whether it has a `/scale` subresource. */
  private async resourceOf(ref: OwnerReference): Promise<{ type: ResourceType; scalable: boolean }> {
    const group = groupOf(ref.apiVersion);
    const version = ref.apiVersion.slice(group ? group.length + 1 : 0);
    const builtin = Object.values(RESOURCES).find((type) => type.group === group && type.kind === ref.kind);
    if (builtin) return { type: builtin, scalable: BUILTIN_SCALABLE.has(builtin.resource) };
    const definitions = await this.ctx.client.list<CustomResourceDefinition>(RESOURCES.customresourcedefinitions);
    for (const crd of definitions.items) {
      const { spec } = crd;
      const served = spec.versions.find((candidate) => candidate.name === version && candidate.served);
      if (spec.group !== group || spec.names.kind !== ref.kind || !served) continue;
      return {
        type: { group, version, resource: spec.names.plural, kind: ref.kind, namespaced: spec.scope === 'Namespaced' },
        scalable: served.subresources?.scale !== undefined,
      };
    }
    throw new DisruptionError('SKIFF_ERR_DISRUPTION_UNKNOWN_KIND', { kind: ref.kind, apiVersion: ref.apiVersion });
  }
}

/**
 * GET of an object's `/scale`. The client reads subresources only by name, so the object's name goes into
 * the resource path and `scale` takes the place of the name.
 */
function getScale(client: ApiClient, type: ResourceType, namespace: string, name: string): Promise<Scale> {
  return client.get<Scale>({ ...{}, ...type, resource: `${type.resource}/${encodeURIComponent(name)}` }, 'scale', namespace);
}
