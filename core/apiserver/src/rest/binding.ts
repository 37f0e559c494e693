import { errors, type Binding, type Pod, type PodCondition } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import { StoreError } from '@skiff/store';
import { admissionRequest, mutate, validate } from '../pipeline/admission.js';
import { requireSubresourceBody } from '../pipeline/type-check.js';
import type { RestContext } from './context.js';
import { objectKey } from './keys.js';
import { timestamp } from './metadata.js';
import { readObject } from './read.js';
import { json, successStatus } from './respond.js';
import { translateStoreError } from './store-errors.js';

const MAX_ATTEMPTS = 5;
const BINDING_KIND = { group: '', version: 'v1', kind: 'Binding' };

/**
 * POST pods/<name>/binding, the scheduler's write: admission sees the Binding; the pod gets spec.nodeName,
 * the binding's annotations and a PodScheduled condition. A pod already bound, or being deleted, is a 409.
 */
export async function bindPod(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const binding = checkBinding(ctx, body);
  const request = admissionRequest(ctx, { operation: 'CREATE', object: binding, kind: BINDING_KIND });
  const admitted = ((await mutate(ctx, request)) ?? binding) as Binding;
  request.object = admitted;
  await validate(ctx, request);
  const { definition, info } = ctx;
  const key = objectKey(definition, info.namespace, info.name);
  for (let attempt = 1; ; attempt++) {
    const current = await readObject<Pod>(ctx, { includeUninitialized: true });
    // The stored object is frozen and only three branches change: copy those, share the rest.
    const stored = current.object;
    const pod: Pod = { ...{}, ...stored, metadata: { ...stored.metadata }, spec: { ...stored.spec }, status: { ...stored.status } };
    if (pod.metadata.deletionTimestamp) throw errors.conflict('pods/binding', '', info.name, `pod ${info.name} is being deleted, cannot be assigned to a host`);
    if (pod.spec.nodeName) throw errors.conflict('pods/binding', '', info.name, `pod ${info.name} is already assigned to node "${pod.spec.nodeName}"`);
    if (admitted.metadata.uid && admitted.metadata.uid !== pod.metadata.uid)
      throw errors.conflict(
        'pods/binding',
        '',
        info.name,
        `Precondition failed: UID in precondition: ${admitted.metadata.uid}, UID in object meta: ${pod.metadata.uid}`,
      );
    pod.spec.nodeName = admitted.target.name;
    if (admitted.metadata.annotations) pod.metadata.annotations = { ...{}, ...pod.metadata.annotations, ...admitted.metadata.annotations };
    pod.status = { ...{}, ...pod.status, conditions: withScheduledCondition(pod.status?.conditions ?? []) };
    if (ctx.dryRun) break;
    try {
      await ctx.core.store.update(key, pod, { expectedRevision: current.revision });
      break;
    } catch (err) {
      if (!(err instanceof StoreError && err.kind === 'Conflict' && attempt < MAX_ATTEMPTS)) throw translateStoreError(err, definition, info.name);
    }
  }
  return json({ ...{}, ...successStatus(), code: 201 }, 201, ctx.warnings);
}

function checkBinding(ctx: RestContext, body: unknown): Binding {
  const binding = requireSubresourceBody<Binding>(ctx, body, BINDING_KIND, 'a Binding');
  if (binding.kind !== undefined && binding.kind !== 'Binding')
    throw errors.badRequest(`the kind in the data (${binding.kind}) does not match the expected kind (Binding)`);
  if (binding.metadata.name && binding.metadata.name !== ctx.info.name)
    throw errors.badRequest(`the name of the object (${binding.metadata.name}) does not match the name on the URL (${ctx.info.name})`);
  binding.metadata.name = ctx.info.name;
  binding.metadata.namespace = ctx.info.namespace;
  const target = binding.target;
  if (!target?.name) throw errors.invalid('Binding', '', ctx.info.name, [{ type: 'FieldValueRequired', field: 'target.name', message: 'Required value' }]);
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node')
    throw errors.invalid('Binding', '', ctx.info.name, [
      { type: 'FieldValueNotSupported', field: 'target.kind', message: `Unsupported value: "${target.kind}": supported values: "Node"` },
    ]);
  return binding;
}

function withScheduledCondition(conditions: PodCondition[]): PodCondition[] {
  const scheduled: PodCondition = { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: timestamp() };
  const existing = conditions.find((condition) => condition.type === 'PodScheduled');
  if (existing?.status === 'True') return conditions;
  return [...conditions.filter((condition) => condition.type !== 'PodScheduled'), scheduled];
}
