import type { ApiResponse } from '@skiff/kernel';
import { queryBool } from '../util/query.js';
import type { RestContext } from './context.js';
import { readObject } from './read.js';
import { json } from './respond.js';
import { tableFormatOf, toTable } from './table.js';
import { waitForRequestedRevision } from './wait-for-revision.js';

/** GET of one object: the object, or a one-row Table when kubectl asks for one. */
export async function getObject(ctx: RestContext): Promise<ApiResponse> {
  await waitForRequestedRevision(ctx);
  const { object } = await readObject(ctx, { includeUninitialized: queryBool(ctx.request.query.includeUninitialized) });
  const table = tableFormatOf(ctx.request.headers.accept, ctx.request.query);
  if (table) return json(toTable(ctx.definition, [object], table, { resourceVersion: object.metadata.resourceVersion }));
  return json(object);
}
