import { apiVersionOf, type KubeList, type KubeObject, type ListMeta } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import { queryBool, queryInt } from '../util/query.js';
import type { RestContext } from './context.js';
import { collectionPrefix } from './keys.js';
import { json } from './respond.js';
import { listFilter } from './selectors.js';
import { translateStoreError } from './store-errors.js';
import { tableFormatOf, toTable } from './table.js';

export interface ListedObjects {
  items: KubeObject[];
  metadata: ListMeta;
}

/** Reads one page of the collection the request names, filtered by its selectors. */
export async function listObjects(ctx: RestContext): Promise<ListedObjects> {
  const { definition, info, request } = ctx;
  const filter = listFilter(definition, request.query, queryBool(request.query.includeUninitialized));
  const limit = queryInt(request.query, 'limit');
  try {
    const result = await ctx.core.store.list(collectionPrefix(definition, info.namespace), {
      ...(limit ? { limit } : {}),
      ...(request.query.continue ? { continue: request.query.continue } : {}),
      ...(filter ? { filter } : {}),
    });
    const metadata: ListMeta = { resourceVersion: String(result.revision) };
    if (result.continue) metadata.continue = result.continue;
    if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
    return { items: result.items.map((stored) => stored.object), metadata };
  } catch (err) {
    throw translateStoreError(err, definition, '');
  }
}

/** GET of a collection: a `<Kind>List`, or a Table when kubectl asks for one. */
export async function listCollection(ctx: RestContext): Promise<ApiResponse> {
  const { definition } = ctx;
  const { items, metadata } = await listObjects(ctx);
  const table = tableFormatOf(ctx.request.headers.accept, ctx.request.query);
  if (table) return json(toTable(definition, items, table, metadata));
  const list: KubeList = { kind: definition.listKind ?? `${definition.kind}List`, apiVersion: apiVersionOf(definition), metadata, items };
  return json(list);
}
