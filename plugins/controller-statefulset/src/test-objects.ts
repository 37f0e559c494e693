import type { PersistentVolumeClaim, Pod, StatefulSet, StatefulSetSpec } from '@skiff/api';
import type { ClaimLookup } from './claims.js';
import { newMemberPod } from './identity.js';
import { planStatefulSet, type Plan, type PlanInput } from './plan.js';

export const NOW = Date.parse('2024-05-01T12:00:00Z');
export const SET_UID = 'set-uid';
export const CONTROLLER_REF = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: SET_UID, controller: true, blockOwnerDeletion: true };

/** A StatefulSet `web` (selector app=web, Service `nginx`) with the given spec fields over the defaults. */
export function testSet(spec: Partial<StatefulSetSpec> = {}, image = 'nginx:1.25'): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'default', uid: SET_UID, generation: 1 },
    spec: {
      replicas: 3,
      serviceName: 'nginx',
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image }] } },
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      ...spec,
    },
  };
}

export type PodState = 'pending' | 'running' | 'ready' | 'terminating' | 'failed' | 'succeeded';

/** A stored member pod of `set` at `ordinal`, at revision `revision`, in the given state. */
export function member(set: StatefulSet, ordinal: number, state: PodState = 'ready', revision = 'web-1', readySince = '2024-05-01T11:00:00Z'): Pod {
  const pod = newMemberPod(set, ordinal, revision, CONTROLLER_REF);
  pod.metadata.uid = `pod-${ordinal}-uid`;
  pod.metadata.generateName = undefined;
  const phase = { pending: 'Pending', running: 'Running', ready: 'Running', terminating: 'Running', failed: 'Failed', succeeded: 'Succeeded' }[state];
  pod.status = { phase };
  if (state === 'ready' || state === 'terminating') pod.status.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: readySince }];
  if (state === 'terminating') pod.metadata.deletionTimestamp = '2024-05-01T11:59:00Z';
  return pod;
}

export function claimLookup(claims: readonly PersistentVolumeClaim[] = []): ClaimLookup {
  const byKey = new Map(claims.map((claim) => [`${claim.metadata.namespace}/${claim.metadata.name}`, claim]));
  return (namespace, name) => byKey.get(`${namespace}/${name}`);
}

/** Plans a pass over `set` with the given pods, current revision web-1 and update revision `update`. */
export function plan(
  set: StatefulSet,
  pods: Pod[],
  options: { update?: string; claims?: PersistentVolumeClaim[]; now?: number; currentSet?: StatefulSet } = {},
): Plan {
  const input: PlanInput = {
    set,
    currentSet: options.currentSet ?? set,
    updateSet: set,
    currentRevision: 'web-1',
    updateRevision: options.update ?? 'web-1',
    pods,
    claims: claimLookup(options.claims),
    controllerRef: CONTROLLER_REF,
    now: options.now ?? NOW,
  };
  return planStatefulSet(input);
}

/** A plan's actions as `type name` strings, phase by phase, for compact assertions. */
export function describePlan(p: Plan): string[] {
  return [...p.replicas.flat(), ...p.condemnedClaims, ...p.condemned, ...p.rolling].map((action) => `${action.type} ${action.pod.metadata.name}`);
}
