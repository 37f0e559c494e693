import { apiVersionOf, errors, type KubeList, type KubeObject, type ListMeta } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import type { ListResult } from '@skiff/store';
import { queryBool, queryInt } from '../util/query.js';
import type { RestContext } from './context.js';
import { collectionPrefix } from './keys.js';
import { listConsistencyOf } from './resource-version.js';
import { json } from './respond.js';
import { listFilter } from './selectors.js';
import { translateStoreError } from './store-errors.js';
import { tableFormatOf, toTable } from './table.js';
import { waitForRevision } from './wait-for-revision.js';

export interface ListedObjects {
  items: KubeObject[];
  metadata: ListMeta;
}

/**
 * Reads one page of the collection the request names, filtered by its selectors, at the revision its
 * resourceVersion parameters ask for (waiting for a newer one, see waitForRevision).
 */
export async function listObjects(ctx: RestContext): Promise<ListedObjects> {
  const { definition, info, request } = ctx;
  const filter = listFilter(definition, request.query, queryBool(request.query.includeUninitialized));
  const limit = queryInt(request.query, 'limit');
  const consistency = listConsistencyOf(request.query, limit);
  if (consistency.kind === 'exact' || consistency.kind === 'notOlderThan') await waitForRevision(ctx, consistency.revision);
  let result: ListResult;
  try {
    result = await ctx.core.store.list(collectionPrefix(definition, info.namespace), {
      ...(limit ? { limit } : {}),
      ...(consistency.kind === 'continue' ? { continue: request.query.continue } : {}),
      ...(filter ? { filter } : {}),
    });
  } catch (err) {
    throw translateStoreError(err, definition, '');
  }
  if (consistency.kind === 'exact' && result.revision !== consistency.revision) throw exactRevisionGone(ctx, consistency.revision, result.revision);
  const metadata: ListMeta = { resourceVersion: String(result.revision) };
  if (result.continue) metadata.continue = result.continue;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  return { items: result.items.map((stored) => stored.object), metadata };
}

/**
 * The store lists its latest state (and older snapshots only through its own continue tokens), so an
 * exact list of an older revision is answered as one no longer retained: 410 Expired, after which
 * clients list again without pinning the revision (client-go's pager and reflector do).
 */
function exactRevisionGone(ctx: RestContext, requested: number, current: number) {
  const compacted = ctx.core.store.compactedRevision();
  const why = requested < compacted ? `revision ${requested} has been compacted (oldest: ${compacted})` : `exact lists are served at the current revision only (${current})`;
  return errors.gone(`The resourceVersion for the provided list is too old: ${why}.`);
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
