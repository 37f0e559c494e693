import { checkOptions, type ClusterEvent, type CycleState, type SchedulerHandle, type SchedulerPlugin, type SchedulingStatus } from '@skiff/kernel';
import { ClaimProblem, VolumeBinder, type PodVolumeClaims, type PodVolumes } from './binder.js';
import { REASON, VOLUME_BINDING } from './names.js';
import { optionsSchema, type VolumeBindingOptions } from './options.js';

const STATE_KEY = VOLUME_BINDING;

/** One pod's cycle: its claims (preFilter), each feasible node's plan (filter), whether reserve found all bound. */
class CycleData {
  readonly byNode = new Map<string, PodVolumes>();
  allBound = false;

  constructor(readonly claims: PodVolumeClaims | undefined) {}

  /** Preemption's simulations share it: adding or removing pods changes nothing about volumes. */
  clone(): CycleData {
    return this;
  }
}

/** Upstream's EventsToRegister (CSIDriver and CSIStorageCapacity have no counterpart here). */
export const VOLUME_BINDING_EVENTS: readonly ClusterEvent[] = Object.freeze([
  { resource: 'StorageClass', actions: ['Add', 'Update'] },
  { resource: 'PersistentVolumeClaim', actions: ['Add', 'Update'] },
  { resource: 'PersistentVolume', actions: ['Add', 'Update'] },
  { resource: 'Node', actions: ['Add', 'UpdateNodeLabel'] },
  { resource: 'CSINode', actions: ['Add', 'Update'] },
]);

const error = (message: string): NonNullable<SchedulingStatus> => ({ code: 'Error', reasons: [message] });
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The SchedulerHandle, with the stop signal a scheduler may offer (preBind's wait ends when it aborts). */
type HandleWithSignal = SchedulerHandle & { signal?: AbortSignal };

/** Checks VolumeBindingArgs as upstream validates them with the VolumeCapacityPriority gate off. */
export function checkVolumeBindingArgs(args: unknown, path = 'args'): VolumeBindingOptions {
  const checked = checkOptions(optionsSchema, args, path) as VolumeBindingOptions;
  if (checked.shape !== undefined) {
    const where = path === 'options' ? 'shape' : `${path}.shape`;
    throw new Error(`option "${where}" is not allowed: unexpected field \`shape\`, remove it or turn on the feature gate VolumeCapacityPriority`);
  }
  return checked;
}

/**
 * Kubernetes' VolumeBinding plugin: a pod goes only where its PersistentVolumeClaims can be bound, and its
 * WaitForFirstConsumer claims are bound (or provisioned) for the chosen node before the pod is bound there.
 * No score: upstream scores only under the VolumeCapacityPriority gate, off by default.
 */
export function createVolumeBinding(options: VolumeBindingOptions = checkVolumeBindingArgs({}, 'options')): SchedulerPlugin {
  let binder: VolumeBinder | undefined;
  const started = () => {
    if (!binder) throw new Error(`${VOLUME_BINDING} was not initialised (the scheduler calls init before scheduling)`);
    return binder;
  };
  const dataOf = (state: CycleState) => state.get(STATE_KEY) as CycleData | undefined;

  return {
    name: VOLUME_BINDING,
    events: VOLUME_BINDING_EVENTS,

    withArgs(args) {
      // A profile's args go over the package options; with none, the profile gets a copy with the same options.
      return createVolumeBinding(checkVolumeBindingArgs({ ...{}, ...options, ...args }));
    },

    init(handle: HandleWithSignal) {
      // One binder for every profile that uses this instance: they share the informers.
      binder ??= new VolumeBinder(handle.client, handle.informers, options.bindTimeoutSeconds * 1000, handle.signal);
    },

    preFilter(state, pod) {
      let claims: PodVolumeClaims | undefined;
      try {
        claims = started().podClaims(pod);
      } catch (err) {
        if (err instanceof ClaimProblem) return { code: 'UnschedulableAndUnresolvable', reasons: [err.message] };
        throw err;
      }
      state.set(STATE_KEY, new CycleData(claims));
      if (!claims) return null;
      // The PV controller binds these on its own; the pod is retried once it has.
      if (claims.unboundImmediate.length > 0) return { code: 'UnschedulableAndUnresolvable', reasons: [REASON.UNBOUND_IMMEDIATE] };
      const nodeNames = started().eligibleNodes(claims.bound);
      return nodeNames ? { nodeNames } : null;
    },

    filter(state, pod, nodeInfo) {
      const data = dataOf(state);
      if (!data) return error(`${VOLUME_BINDING}: no cycle state (its preFilter did not run)`);
      if (!data.claims) return null;
      const { volumes, reasons } = started().findPodVolumes(data.claims, nodeInfo.node);
      if (reasons.length > 0) return { code: 'UnschedulableAndUnresolvable', reasons };
      data.byNode.set(nodeInfo.node.metadata.name!, volumes);
      return null;
    },

    reserve(state, pod, nodeName) {
      const data = dataOf(state);
      if (!data) return error(`${VOLUME_BINDING}: no cycle state (its preFilter did not run)`);
      const volumes = data.byNode.get(nodeName);
      if (!volumes) {
        data.allBound = true;
        return null;
      }
      try {
        data.allBound = started().assume(pod, nodeName, volumes);
      } catch (err) {
        return error(messageOf(err));
      }
      return null;
    },

    async preBind(state, pod, nodeName) {
      const data = dataOf(state);
      if (!data) return error(`${VOLUME_BINDING}: no cycle state (its preFilter did not run)`);
      if (data.allBound) return null;
      const volumes = data.byNode.get(nodeName);
      if (!volumes) return error(`no pod volumes found for node "${nodeName}"`);
      try {
        await started().bind(pod, nodeName, volumes);
      } catch (err) {
        return error(messageOf(err));
      }
      return null;
    },

    unreserve(state, _pod, nodeName) {
      const volumes = dataOf(state)?.byNode.get(nodeName);
      if (volumes) started().revert(volumes);
    },
  };
}
