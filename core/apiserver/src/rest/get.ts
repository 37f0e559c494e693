import type { ApiResponse } from '@skiff/kernel';
import { queryBool } from '../util/query.js';
import type { RestContext } from './context.js';
import { readObject } from './read.js';
import { prefersProtobuf } from '../pipeline/negotiate.js';
import { cachedJson } from './json-cache.js';
import { metadataFormatOf, metadataResponse, partialObjectMetadata, requireMetadataKind } from './partial-metadata.js';
import { json } from './respond.js';
import { tableFormatOf, toTable } from './table.js';
import { waitForRequestedRevision } from './wait-for-revision.js';

/** GET of one object: the object, a one-row Table when kubectl asks for one, or its metadata alone. */
export async function getObject(ctx: RestContext): Promise<ApiResponse> {
  await waitForRequestedRevision(ctx);
  const stored = await readObject(ctx, { includeUninitialized: queryBool(ctx.request.query.includeUninitialized) });
  const { object } = stored;
  const table = tableFormatOf(ctx.request.headers.accept, ctx.request.query);
  if (table) return json(toTable(ctx.definition, [object], table, { resourceVersion: object.metadata.resourceVersion }));
  const metadataOnly = metadataFormatOf(ctx.request.headers.accept);
  if (metadataOnly) {
    requireMetadataKind(metadataOnly, false);
    return metadataResponse(partialObjectMetadata(object, metadataOnly), metadataOnly);
  }
  // JSON clients over a socket get the object's cached text (see json-cache.ts); others the object.
  if (ctx.info.subresource === '' && ctx.request.remoteAddress !== undefined && !prefersProtobuf(ctx.request.headers.accept)) {
    return { status: 200, headers: { 'content-type': 'application/json' }, body: cachedJson(stored.key, stored.revision, object) };
  }
  return json(object);
}
