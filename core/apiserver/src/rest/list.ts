import { apiVersionOf, errors, type KubeList, type KubeObject, type ListMeta } from '@skiff/api';
import { encodeProtobufList, encodeProtobufListItem, PROTOBUF_MEDIA_TYPE, protobufMessageOf } from '@skiff/api/protobuf';
import type { ApiResponse } from '@skiff/kernel';
import { StoreError, type ListResult } from '@skiff/store';
import { queryBool, queryInt } from '../util/query.js';
import type { RestContext } from './context.js';
import { collectionPrefix } from './keys.js';
import { listConsistencyOf } from './resource-version.js';
import { cachedJson, cachedProtobufItem } from './json-cache.js';
import { json } from './respond.js';
import { prefersProtobuf } from '../pipeline/negotiate.js';
import { listFilter } from './selectors.js';
import { translateStoreError } from './store-errors.js';
import { metadataFormatOf, metadataResponse, partialObjectMetadataList, requireMetadataKind } from './partial-metadata.js';
import { tableFormatOf, toTable } from './table.js';
import { waitForRevision } from './wait-for-revision.js';

export interface ListedObjects {
  items: KubeObject[];
  metadata: ListMeta;
  /** The items as the store returned them (keys and revisions). */
  stored: ListResult['items'];
}

/**
 * Reads one page of the collection the request names, filtered by its selectors, at the revision its
 * resourceVersion parameters ask for (waiting for a newer one, see waitForRevision).
 */
export async function listObjects(ctx: RestContext): Promise<ListedObjects> {
  const { definition, info, request } = ctx;
  const filter = listFilter(definition, request.query, queryBool(request.query.includeUninitialized));
  const limit = queryInt(request.query, 'limit');
  // Part of ListOptions for a list too, where it has no effect here (a list answers at once); checked all the same.
  queryInt(request.query, 'timeoutSeconds');
  const consistency = listConsistencyOf(request.query, limit);
  if (consistency.kind === 'exact' || consistency.kind === 'notOlderThan') await waitForRevision(ctx, consistency.revision);
  let result: ListResult;
  try {
    result = await ctx.core.store.list(collectionPrefix(definition, info.namespace), {
      ...{},
      ...(limit ? { limit } : {}),
      ...(consistency.kind === 'continue' ? { continue: request.query.continue } : {}),
      ...(consistency.kind === 'exact' ? { revision: consistency.revision } : {}),
      ...(filter ? { filter } : {}),
    });
  } catch (err) {
    if (consistency.kind === 'exact' && err instanceof StoreError && err.kind === 'Compacted') throw exactRevisionGone(ctx, consistency.revision);
    throw translateStoreError(err, definition, '');
  }
  const metadata: ListMeta = { resourceVersion: String(result.revision) };
  if (result.continue) metadata.continue = result.continue;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  return { items: result.items.map((stored) => stored.object), metadata, stored: result.items };
}

/** An exact list of a revision the event log no longer reaches: 410 Expired, and clients list again. */
function exactRevisionGone(ctx: RestContext, requested: number) {
  return errors.gone(
    `The resourceVersion for the provided list is too old: revision ${requested} has been compacted (oldest: ${ctx.core.store.compactedRevision()}).`,
  );
}

/** GET of a collection: a `<Kind>List`, a Table when kubectl asks for one, or a PartialObjectMetadataList. */
export async function listCollection(ctx: RestContext): Promise<ApiResponse> {
  const { definition } = ctx;
  const { items, metadata, stored } = await listObjects(ctx);
  const table = tableFormatOf(ctx.request.headers.accept, ctx.request.query);
  if (table) return json(toTable(definition, items, table, metadata));
  const metadataOnly = metadataFormatOf(ctx.request.headers.accept);
  if (metadataOnly) {
    requireMetadataKind(metadataOnly, true);
    return metadataResponse(partialObjectMetadataList(items, metadata, metadataOnly), metadataOnly);
  }
  const apiVersion = apiVersionOf(definition);
  const kind = definition.listKind ?? `${definition.kind}List`;
  const list: KubeList = { kind, apiVersion, metadata, items };
  // Clients over a socket get the list assembled from each item's cached encoding; in-process callers (no
  // remote address) get the list itself.
  if (ctx.request.remoteAddress === undefined) return json(list);
  if (prefersProtobuf(ctx.request.headers.accept)) {
    if (!protobufMessageOf(apiVersion, kind)) return json(list);
    return { status: 200, headers: { 'content-type': PROTOBUF_MEDIA_TYPE }, body: await protobufList({ apiVersion, kind, metadata }, stored) };
  }
  const head = JSON.stringify({ ...{}, ...list, items: [] }).slice(0, -2);
  if (stored.length <= STREAM_ABOVE_ITEMS) {
    const text = `${head}${stored.map((item) => cachedJson(item.key, item.revision, item.object)).join(',')}]}`;
    return { status: 200, headers: { 'content-type': 'application/json' }, body: text };
  }
  return { status: 200, headers: { 'content-type': 'application/json' }, textStream: listChunks(head, stored) };
}

/** How many items of a protobuf list are encoded between two turns of the event loop. */
const PROTOBUF_ITEMS_PER_TURN = 200;

/**
 * A list in protobuf from each item's cached bytes. Items not cached yet are encoded a few hundred at a time,
 * the event loop free in between, so a cold list of thousands of objects does not hold up other requests.
 */
async function protobufList(list: { apiVersion: string; kind: string; metadata: ListMeta }, stored: ListResult['items']): Promise<Buffer> {
  const items: Uint8Array[] = [];
  for (let i = 0; i < stored.length; i++) {
    const { key, revision, object } = stored[i]!;
    // A copy of exactly its size: the encoder's buffer is larger, and may be shared.
    items.push(cachedProtobufItem(key, revision, () => encodeProtobufListItem(list.apiVersion, list.kind, object).slice()));
    if (i % PROTOBUF_ITEMS_PER_TURN === PROTOBUF_ITEMS_PER_TURN - 1) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const bytes = encodeProtobufList(list, items);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** Lists longer than this go out in chunks (a few hundred pods are well under a megabyte). */
const STREAM_ABOVE_ITEMS = 500;
/** About how many characters one chunk of a streamed list holds. */
const CHUNK_CHARS = 512 * 1024;

/**
 * A long list as a stream of chunks, the event loop free between them: one client's list of thousands of
 * objects is encoded and encrypted in pieces, so other requests are answered in between instead of after
 * it, and the text of the whole list is never held at once (the socket's backpressure paces the chunks).
 */
async function* listChunks(head: string, stored: ListResult['items']): AsyncGenerator<string> {
  let chunk = head;
  for (let i = 0; i < stored.length; i++) {
    const item = stored[i]!;
    chunk += (i === 0 ? '' : ',') + cachedJson(item.key, item.revision, item.object);
    if (chunk.length >= CHUNK_CHARS) {
      yield chunk;
      chunk = '';
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  yield `${chunk}]}`;
}
