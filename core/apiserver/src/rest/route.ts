import { errors } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import type { DecodedBody } from '../pipeline/decode-body.js';
import { verbsOf } from '../discovery/subresources.js';
import { watchCollection } from '../watch/watch.js';
import { bindPod } from './binding.js';
import type { RestContext } from './context.js';
import { createObject } from './create.js';
import { deleteCollection } from './delete-collection.js';
import { deleteObject } from './delete.js';
import { evictPod } from './eviction.js';
import { getObject } from './get.js';
import { listCollection } from './list.js';
import { patchObject } from './patch.js';
import { reviewHandler } from './reviews.js';
import { getScale, patchScale, updateScale } from './scale.js';
import { updateObject } from './update.js';

/** Dispatches a resource request by verb and subresource to its handler. */
export async function routeResource(ctx: RestContext, body: DecodedBody): Promise<ApiResponse> {
  const { definition, info } = ctx;
  if (info.namespace && !definition.namespaced && !isNamespaceItself(ctx)) throw errors.pathNotFound(info.path);
  const review = reviewHandler(definition.group, definition.resource);
  if (review) {
    if (info.verb !== 'create' || info.name) throw methodNotAllowed(ctx);
    return review(ctx, body.value);
  }
  if (!info.subresource) return routeMain(ctx, body);
  if (!definition.subresources?.includes(info.subresource)) throw errors.pathNotFound(info.path);
  return routeSubresource(ctx, body);
}

function routeMain(ctx: RestContext, body: DecodedBody): Promise<ApiResponse> | ApiResponse {
  const { verb } = ctx.info;
  if (!verbsOf(ctx.definition).includes(verb)) throw methodNotAllowed(ctx);
  switch (verb) {
    case 'get':
      return getObject(ctx);
    case 'list':
      return listCollection(ctx);
    case 'watch':
      return watchCollection(ctx);
    case 'create':
      if (ctx.info.name) throw methodNotAllowed(ctx);
      return createObject(ctx, body.value);
    case 'update':
      return updateObject(ctx, body.value);
    case 'patch':
      return patchObject(ctx, body);
    case 'delete':
      return deleteObject(ctx, body.value);
    case 'deletecollection':
      return deleteCollection(ctx, body.value);
    default:
      throw methodNotAllowed(ctx);
  }
}

function routeSubresource(ctx: RestContext, body: DecodedBody): Promise<ApiResponse> {
  const { verb, subresource } = ctx.info;
  switch (`${subresource} ${verb}`) {
    case 'status get':
      return getObject(ctx);
    case 'status update':
    case 'finalize update':
      return updateObject(ctx, body.value);
    case 'status patch':
      return patchObject(ctx, body);
    case 'scale get':
      return getScale(ctx);
    case 'scale update':
      return updateScale(ctx, body.value);
    case 'scale patch':
      return patchScale(ctx, body);
    case 'binding create':
      return bindPod(ctx, body.value);
    case 'eviction create':
      return evictPod(ctx, body.value);
    default:
      throw methodNotAllowed(ctx);
  }
}

/** `/api/v1/namespaces/x` names the namespace x itself: its namespace is its own name, as in Kubernetes. */
function isNamespaceItself(ctx: RestContext): boolean {
  return ctx.definition.group === '' && ctx.definition.resource === 'namespaces';
}

function methodNotAllowed(ctx: RestContext) {
  return errors.methodNotAllowed(`the server does not allow this method on the requested resource (${ctx.request.method} ${ctx.info.path})`);
}
