import { apiVersionOf, type KubeObject } from '@skiff/api';
import { encodeProtobufWatchEvent, PROTOBUF_MEDIA_TYPE, protobufMessageOf } from '@skiff/api/protobuf';
import type { ApiResponse, WatchEvent } from '@skiff/kernel';
import { prefersProtobuf } from '../pipeline/negotiate.js';
import type { RestContext } from '../rest/context.js';
import { collectionPrefix } from '../rest/keys.js';
import { watchStartOf } from '../rest/resource-version.js';
import { listFilter } from '../rest/selectors.js';
import { metadataFormatOf, partialObjectMetadata, requireMetadataKind } from '../rest/partial-metadata.js';
import { tableFormatOf, toTable } from '../rest/table.js';
import { waitForRevision } from '../rest/wait-for-revision.js';
import { queryBool, queryInt } from '../util/query.js';
import { watchStream } from './watch-stream.js';

const WATCH_HEADERS = Object.freeze({ 'content-type': 'application/json' });
const PROTOBUF_WATCH_HEADERS = Object.freeze({ 'content-type': `${PROTOBUF_MEDIA_TYPE};stream=watch` });

/**
 * `?watch=true` on a collection (or on one object by path or `fieldSelector=metadata.name=x`). Parameters
 * are checked before the response starts, so a bad selector or resourceVersion is a 400 (a forbidden
 * combination a 422), not a broken stream; a resourceVersion newer than the store is waited for first
 * (504 if it does not come). A compacted one is an ERROR event carrying 410 Expired, as in Kubernetes.
 */
export async function watchCollection(ctx: RestContext): Promise<ApiResponse> {
  const { definition, info, request, core } = ctx;
  const query = request.query;
  const byName = info.name ? nameFilter(info.name) : undefined;
  const selectors = listFilter(definition, query, queryBool(query.includeUninitialized));
  const filter = byName && selectors ? (object: KubeObject) => byName(object) && selectors(object) : (byName ?? selectors);
  const start = watchStartOf(query);
  const timeoutSeconds = queryInt(query, 'timeoutSeconds');
  const table = tableFormatOf(request.headers.accept, query);
  const metadataOnly = table ? undefined : metadataFormatOf(request.headers.accept);
  if (metadataOnly) requireMetadataKind(metadataOnly, false);
  const transform = table
    ? (object: KubeObject) => toTable(definition, [object], table, { resourceVersion: object.metadata.resourceVersion })
    : metadataOnly && ((object: KubeObject) => partialObjectMetadata(object, metadataOnly));
  // Bookmarks are of the kind the events carry.
  const bookmarkKind = metadataOnly
    ? { apiVersion: metadataOnly.apiVersion, kind: 'PartialObjectMetadata' }
    : { apiVersion: apiVersionOf(definition), kind: definition.kind };
  if (start.revision > 0) await waitForRevision(ctx, start.revision);
  const stream = watchStream({
    store: core.store,
    logger: core.logger,
    prefix: collectionPrefix(definition, info.namespace),
    filter,
    initialEvents: start.initialEvents,
    fromRevision: start.revision === 0 ? core.store.revision() : start.revision,
    bookmark: queryBool(query.allowWatchBookmarks)
      ? { ...{}, ...bookmarkKind, intervalMs: core.bookmarkIntervalMs, afterInitialEvents: start.initialEventsRequested }
      : undefined,
    transform: transform || undefined,
    timeoutMs: timeoutSeconds ? timeoutSeconds * 1000 : undefined,
    signals: [request.signal, core.stopping],
    watcher: `${ctx.user.username} ${definition.resource}`,
  });
  const groupVersion = apiVersionOf(definition);
  if (metadataOnly?.protobuf || (!table && !metadataOnly && prefersProtobuf(request.headers.accept) && protobufMessageOf(groupVersion, definition.kind))) {
    return { status: 200, headers: PROTOBUF_WATCH_HEADERS, textStream: protobufFrames(stream) };
  }
  return { status: 200, headers: WATCH_HEADERS, stream };
}

/** Each event as a length-prefixed protobuf frame. */
async function* protobufFrames(stream: AsyncIterable<WatchEvent>): AsyncIterable<Uint8Array> {
  for await (const event of stream) yield encodeProtobufWatchEvent(event.type, event.object);
}

function nameFilter(name: string) {
  return (object: KubeObject) => object.metadata.name === name;
}
