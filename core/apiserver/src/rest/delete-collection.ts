import { apiVersionOf, isApiError, type KubeObject } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import type { RestContext } from './context.js';
import { deleteOptionsOf } from './delete-options.js';
import { deleteNamed } from './delete.js';
import { listObjects } from './list.js';
import { json } from './respond.js';

/**
 * DELETE of a collection: every object the selectors match goes through the single-object delete (with its
 * admission, grace periods and finalizers). Answers the list of what was deleted or marked.
 */
export async function deleteCollection(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const options = deleteOptionsOf(body, ctx.request.query, ctx);
  const { items, metadata } = await listObjects({
    ...{},
    ...ctx,
    request: { ...{}, ...ctx.request, query: { ...{}, ...ctx.request.query, limit: undefined, continue: undefined } },
  });
  const deleted: KubeObject[] = [];
  for (const item of items) {
    const info = { ...{}, ...ctx.info, name: item.metadata.name!, namespace: item.metadata.namespace ?? ctx.info.namespace, verb: 'delete' };
    try {
      deleted.push(await deleteNamed({ ...{}, ...ctx, info }, options));
    } catch (err) {
      // Gone in the meantime (another client, the garbage collector): nothing left to do for it.
      if (!isApiError(err, 'NotFound')) throw err;
    }
  }
  const { definition } = ctx;
  return json({ kind: definition.listKind ?? `${definition.kind}List`, apiVersion: apiVersionOf(definition), metadata, items: deleted }, 200, ctx.warnings);
}
