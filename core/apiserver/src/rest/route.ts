import { errors } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import type { DecodedBody } from '../pipeline/decode-body.js';
import { subresourceInfo, verbsOf } from '../discovery/subresources.js';
import { watchCollection } from '../watch/watch.js';
import type { RestContext } from './context.js';
import { routeConverted } from './convert.js';
import { createObject } from './create.js';
import { deleteCollection } from './delete-collection.js';
import { deleteObject } from './delete.js';
import { getObject } from './get.js';
import { listCollection } from './list.js';
import { patchObject } from './patch.js';
import { getScale, patchScale, updateScale } from './scale.js';
import { refuseTableWithoutConvertor } from './table.js';
import { updateObject } from './update.js';

/** Dispatches a resource request by verb and subresource to its handler. */
export function routeResource(ctx: RestContext, body: DecodedBody): Promise<ApiResponse> {
  // A version served from another version's storage, or a stored version whose objects are read through a
  // conversion: converted on the way in and out. (Not async itself: no extra turn before the handler runs.)
  if (ctx.definition.conversion || ctx.definition.readConversion) return routeConverted(ctx, body, routeStored);
  return routeStored(ctx, body);
}

/** A request to a stored version's definition, objects as they are stored. */
async function routeStored(ctx: RestContext, body: DecodedBody): Promise<ApiResponse> {
  const { definition, info } = ctx;
  if (info.namespace && !definition.namespaced && !info.namesNamespace) throw errors.pathNotFound(info.path);
  if (info.subresource && !definition.subresources?.includes(info.subresource)) throw errors.pathNotFound(info.path);
  if (!servesTables(ctx)) refuseTableWithoutConvertor(ctx.request.headers.accept);
  // Behaviour a kind registered for one of its verbs or subresources (pods/binding, the review kinds' create).
  const special = ctx.core.handlers.find(definition, info.subresource, info.verb);
  if (special) return special(ctx, body);
  if (!info.subresource) return routeMain(ctx, body);
  return routeSubresource(ctx, body);
}

/** Tables come from stored kinds (their objects, status and scale); create-only kinds and other subresources have none. */
function servesTables({ definition, info }: RestContext): boolean {
  if (info.subresource) return info.subresource === 'status' || info.subresource === 'scale';
  const verbs = verbsOf(definition);
  return verbs.includes('get') || verbs.includes('list');
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
  // A subresource speaking its parent's kind (status, finalize, pods' ephemeralcontainers and resize) reads the
  // object and writes the part of it the kind's prepareForUpdate keeps for that subresource.
  const info = subresourceInfo(ctx.definition, subresource);
  if (info.part && info.verbs.includes(verb)) {
    if (verb === 'get') return getObject(ctx);
    if (verb === 'update') return updateObject(ctx, body.value);
    if (verb === 'patch') return patchObject(ctx, body);
  }
  switch (`${subresource} ${verb}`) {
    case 'scale get':
      return getScale(ctx);
    case 'scale update':
      return updateScale(ctx, body.value);
    case 'scale patch':
      return patchScale(ctx, body);
    default:
      throw methodNotAllowed(ctx);
  }
}

function methodNotAllowed(ctx: RestContext) {
  return errors.methodNotAllowed(`the server does not allow this method on the requested resource (${ctx.request.method} ${ctx.info.path})`);
}
