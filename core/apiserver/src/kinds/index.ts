// The kinds every Skiff API server serves — each declared once with defineKind, one file per API group —
// and the handlers some of them register for their own verbs and subresources.
import { errors, type KubeObject, type ResourceDefinition } from '@skiff/api';
import type { KindHandlers } from '../rest/handlers.js';
import { bindPod } from '../rest/binding.js';
import { guardedUpdate } from '../rest/commit-update.js';
import { evictPod } from '../rest/eviction.js';
import { createObject } from '../rest/create.js';
import { getObject } from '../rest/get.js';
import { patchObject } from '../rest/patch.js';
import { json } from '../rest/respond.js';
import { checkIdentity } from '../rest/update.js';
import { requireObject } from '../pipeline/type-check.js';
import { APPS_KINDS } from './apps/index.js';
import { BATCH_KINDS } from './batch.js';
import { AUTOSCALING_KINDS } from './autoscaling.js';
import { POLICY_KINDS } from './policy.js';
import { NETWORKING_KINDS } from './networking.js';
import { SCHEDULING_KINDS } from './scheduling.js';
import { NODE_KINDS } from './node.js';
import { DISCOVERY_KINDS } from './discovery.js';
import { EVENTS_KINDS } from './events.js';
import { RBAC_KINDS } from './rbac.js';
import { STORAGE_KINDS } from './storage.js';
import { CERTIFICATES_KINDS } from './certificates.js';
import { ADMISSIONREGISTRATION_KINDS } from './admissionregistration.js';
import { FLOWCONTROL_KINDS } from './flowcontrol.js';
import { RESOURCE_KINDS } from './resource.js';
import { APIEXTENSIONS_KINDS } from './apiextensions.js';
import { APIREGISTRATION_KINDS } from './apiregistration.js';
import { bindings, CORE_KINDS, pods } from './core/index.js';
import { COORDINATION_KINDS } from './coordination.js';
import { registerReviewHandlers, REVIEW_KINDS } from './reviews.js';
import { registerPodStreamHandlers } from './pod-streams.js';
import { registerProxyHandlers } from '../proxy/handlers.js';
import type { KubeletCredentials } from '../proxy/target.js';
import type { NodeConnectionLookup } from '../streaming/pod-target.js';

export { NAMESPACE_FINALIZER, podQOSClass, type QOSClass } from './core/index.js';

/**
 * The built-in resources whose metadata.generation the server keeps, as upstream's strategies do in v1.28
 * (`<resource>.<group>`); every other built-in kind has the generation it was created with, unchanged.
 */
const GENERATION_KEPT = new Set([
  'cronjobs.batch',
  'csidrivers.storage.k8s.io',
  'customresourcedefinitions.apiextensions.k8s.io',
  'daemonsets.apps',
  'deployments.apps',
  'endpointslices.discovery.k8s.io',
  'flowschemas.flowcontrol.apiserver.k8s.io',
  'ingressclasses.networking.k8s.io',
  'ingresses.networking.k8s.io',
  'jobs.batch',
  'mutatingwebhookconfigurations.admissionregistration.k8s.io',
  'networkpolicies.networking.k8s.io',
  'poddisruptionbudgets.policy',
  'podtemplates',
  'priorityclasses.scheduling.k8s.io',
  'prioritylevelconfigurations.flowcontrol.apiserver.k8s.io',
  'replicasets.apps',
  'replicationcontrollers',
  'statefulsets.apps',
  'validatingadmissionpolicies.admissionregistration.k8s.io',
  'validatingadmissionpolicybindings.admissionregistration.k8s.io',
  'validatingwebhookconfigurations.admissionregistration.k8s.io',
]);

function withGenerationRule(definition: ResourceDefinition): ResourceDefinition {
  const key = definition.group ? `${definition.resource}.${definition.group}` : definition.resource;
  return GENERATION_KEPT.has(key) ? definition : { ...{}, ...definition, generation: false };
}

/** Every built-in kind, grouped by API group. */
export function builtinResources(): ResourceDefinition[] {
  return [
    ...CORE_KINDS,
    ...APPS_KINDS,
    ...COORDINATION_KINDS,
    ...REVIEW_KINDS,
    ...BATCH_KINDS,
    ...AUTOSCALING_KINDS,
    ...POLICY_KINDS,
    ...NETWORKING_KINDS,
    ...SCHEDULING_KINDS,
    ...NODE_KINDS,
    ...DISCOVERY_KINDS,
    ...EVENTS_KINDS,
    ...RBAC_KINDS,
    ...STORAGE_KINDS,
    ...CERTIFICATES_KINDS,
    ...ADMISSIONREGISTRATION_KINDS,
    ...FLOWCONTROL_KINDS,
    ...RESOURCE_KINDS,
    ...APIEXTENSIONS_KINDS,
    ...APIREGISTRATION_KINDS,
  ].map(withGenerationRule);
}

/**
 * The handlers of the built-in kinds' own verbs and subresources; `nodes` finds a node's kubelet for the pod
 * subresources it serves, `kubelets` is what nodes/proxy presents to kubelets and verifies them against.
 */
export function registerBuiltinHandlers(handlers: KindHandlers, nodes: NodeConnectionLookup, kubelets: KubeletCredentials): void {
  registerPodStreamHandlers(handlers, nodes);
  registerProxyHandlers(handlers, kubelets);
  handlers
    .register({ group: '', resource: pods.resource, subresource: 'binding', verb: 'create' }, (ctx, body) => bindPod(ctx, body.value))
    .register({ group: '', resource: pods.resource, subresource: 'eviction', verb: 'create' }, (ctx, body) => evictPod(ctx, body.value))
    // The older form of pods/binding: POST …/namespaces/<ns>/bindings, naming the pod in the Binding.
    .register({ group: '', resource: bindings.resource, verb: 'create' }, (ctx, body) => {
      const name = (body.value as KubeObject | undefined)?.metadata?.name;
      if (!name) throw errors.badRequest('the Binding must name the pod in metadata.name');
      const podDefinition = ctx.core.registry.get('', pods.resource) ?? pods;
      return bindPod(
        { ...{}, ...ctx, definition: podDefinition, info: { ...{}, ...ctx.info, resource: pods.resource, name, subresource: 'binding' } },
        body.value,
      );
    });
  // certificatesigningrequests: the request records who asked (whatever the client wrote there), then is created.
  const csr = { group: 'certificates.k8s.io', resource: 'certificatesigningrequests' };
  handlers.register({ ...{}, ...csr, verb: 'create' }, (ctx, body) => {
    const object = body.value as { spec?: Record<string, unknown> } | undefined;
    if (object && typeof object === 'object' && !Array.isArray(object)) {
      const { username, uid, groups, extra } = ctx.user;
      const spec = { ...(object.spec && typeof object.spec === 'object' ? object.spec : {}) };
      for (const field of ['username', 'uid', 'groups', 'extra']) delete spec[field];
      // Copies: the request's object is frozen later on, and the user's info outlives the request.
      object.spec = {
        ...{},
        ...spec,
        username,
        ...(uid ? { uid } : {}),
        ...(groups.length ? { groups: [...groups] } : {}),
        ...(extra ? { extra: structuredClone(extra) } : {}),
      };
    }
    return createObject(ctx, body.value);
  });
  // certificatesigningrequests/approval: only the Approved/Denied conditions change (kubectl certificate approve|deny).
  const approval = { ...{}, ...csr, subresource: 'approval' };
  handlers
    .register({ ...{}, ...approval, verb: 'get' }, (ctx) => getObject(ctx))
    .register({ ...{}, ...approval, verb: 'patch' }, (ctx, body) => patchObject(ctx, body))
    .register({ ...{}, ...approval, verb: 'update' }, async (ctx, body) => {
      const requested = requireObject(body.value, ctx.definition);
      checkIdentity(ctx, requested);
      const conditions = (requested.status as { conditions?: unknown[] } | undefined)?.conditions;
      const updated = await guardedUpdate(ctx, (current) => {
        const next = structuredClone(current.object);
        next.metadata.resourceVersion = requested.metadata.resourceVersion ?? next.metadata.resourceVersion;
        next.status = { ...{}, ...(next.status as object), ...(conditions ? { conditions } : {}) };
        return { object: next, conditional: requested.metadata.resourceVersion !== undefined };
      });
      return json(updated);
    });
  registerReviewHandlers(handlers);
}
