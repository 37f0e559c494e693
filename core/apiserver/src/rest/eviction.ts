import { errors, type KubeObject } from '@skiff/api';
import type { ApiResponse, DeleteOptions } from '@skiff/kernel';
import { admissionRequest, mutate, validate } from '../pipeline/admission.js';
import { requireSubresourceBody } from '../pipeline/type-check.js';
import type { RestContext } from './context.js';
import { deleteOptionsOf } from './delete-options.js';
import { deleteNamed } from './delete.js';
import { readObject } from './read.js';
import { json, successStatus } from './respond.js';

const EVICTION_KIND = { group: 'policy', version: 'v1', kind: 'Eviction' };

/**
 * POST pods/<name>/eviction (kubectl drain): admission sees the Eviction (a disruption-budget plugin answers
 * 429 there), then the pod is deleted with the eviction's delete options — gracefully if it runs on a node.
 */
export async function evictPod(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const eviction = requireSubresourceBody<KubeObject & { deleteOptions?: DeleteOptions }>(ctx, body, EVICTION_KIND, 'an Eviction');
  if (eviction.metadata.name && eviction.metadata.name !== ctx.info.name) throw errors.badRequest(`name in URL does not match name in Eviction object`);
  await readObject(ctx);
  const request = admissionRequest(ctx, { operation: 'CREATE', object: eviction, kind: EVICTION_KIND });
  request.object = (await mutate(ctx, request)) ?? eviction;
  await validate(ctx, request);
  const options = deleteOptionsOf((request.object as typeof eviction).deleteOptions, {});
  await deleteNamed({ ...ctx, info: { ...ctx.info, subresource: '', verb: 'delete' } }, options);
  return json({ ...successStatus(), code: 201 }, 201, ctx.warnings);
}
