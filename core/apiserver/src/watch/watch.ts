import { apiVersionOf, errors, type KubeObject } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import type { RestContext } from '../rest/context.js';
import { collectionPrefix } from '../rest/keys.js';
import { listFilter } from '../rest/selectors.js';
import { tableFormatOf, toTable } from '../rest/table.js';
import { queryBool, queryInt } from '../util/query.js';
import { watchStream } from './watch-stream.js';

const WATCH_HEADERS = Object.freeze({ 'content-type': 'application/json' });

/**
 * `?watch=true` on a collection (or on one object by path or `fieldSelector=metadata.name=x`). Parameters
 * are checked before the response starts, so a bad selector is a 400, not a broken stream.
 */
export function watchCollection(ctx: RestContext): ApiResponse {
  const { definition, info, request, core } = ctx;
  const query = request.query;
  const byName = info.name ? nameFilter(info.name) : undefined;
  const selectors = listFilter(definition, query, queryBool(query.includeUninitialized));
  const filter = byName && selectors ? (object: KubeObject) => byName(object) && selectors(object) : (byName ?? selectors);
  const resourceVersion = query.resourceVersion;
  const fromRevision = resourceVersion === undefined || resourceVersion === '' ? 0 : Number(resourceVersion);
  if (!Number.isInteger(fromRevision) || fromRevision < 0) throw errors.badRequest(`invalid resourceVersion: ${JSON.stringify(resourceVersion)}`);
  const sendInitialEvents = query.sendInitialEvents;
  const initialEvents = sendInitialEvents === 'true' || (fromRevision === 0 && sendInitialEvents !== 'false');
  const timeoutSeconds = queryInt(query, 'timeoutSeconds');
  const table = tableFormatOf(request.headers.accept, query);
  const stream = watchStream({
    store: core.store,
    logger: core.logger,
    prefix: collectionPrefix(definition, info.namespace),
    filter,
    initialEvents,
    fromRevision: fromRevision === 0 ? core.store.revision() : fromRevision,
    bookmark: queryBool(query.allowWatchBookmarks)
      ? { apiVersion: apiVersionOf(definition), kind: definition.kind, intervalMs: core.bookmarkIntervalMs, afterInitialEvents: sendInitialEvents === 'true' }
      : undefined,
    transform: table ? (object) => toTable(definition, [object], table, { resourceVersion: object.metadata.resourceVersion }) : undefined,
    timeoutMs: timeoutSeconds ? timeoutSeconds * 1000 : undefined,
    signals: [request.signal, core.stopping],
  });
  return { status: 200, headers: WATCH_HEADERS, stream };
}

function nameFilter(name: string) {
  return (object: KubeObject) => object.metadata.name === name;
}
