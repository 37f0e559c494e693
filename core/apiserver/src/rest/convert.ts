// Requests to a version served from another version's storage (autoscaling/v1 HorizontalPodAutoscaler beside the
// stored v2; events.k8s.io/v1 Events, which are core Events). Bodies are type-checked against the requested
// version, converted to the stored one and handled by the stored version's definition, validated by the requested
// version's rules where it has its own; field selectors are translated; objects in responses, lists and watch
// events are converted back. A stored version with a readConversion (custom resources) handles its requests
// itself, and every object of the kind in its answers goes through it.
import {
  ApiError,
  apiVersionOf,
  errorMessage,
  errors,
  escapeFieldSelectorValue,
  isJsonObject,
  isKubeObject,
  parseFieldSelector,
  type KubeObject,
  type ResourceDefinition,
  type VersionConversion,
} from '@skiff/api';
import type { ApiResponse, WatchEvent } from '@skiff/kernel';
import type { DecodedBody } from '../pipeline/decode-body.js';
import { prefersProtobuf } from '../pipeline/negotiate.js';
import { fieldValidationOf, requireObject, typeCheck, withTypeMeta } from '../pipeline/type-check.js';
import { guardedUpdate } from './commit-update.js';
import type { RestContext } from './context.js';
import { applyPatchDocument, checkPatchShape, patchKindOf, pinsResourceVersion } from './patch-document.js';
import { json, warningHeaders } from './respond.js';
import { checkIdentity } from './update.js';

type Route = (ctx: RestContext, body: DecodedBody) => Promise<ApiResponse>;

export async function routeConverted(ctx: RestContext, body: DecodedBody, route: Route): Promise<ApiResponse> {
  const served = ctx.definition;
  // Watches and reads come back as JSON to be converted (protobuf frames could not be).
  const accept = prefersProtobuf(ctx.request.headers.accept) ? 'application/json' : ctx.request.headers.accept;
  const headers = { ...{}, ...ctx.request.headers, ...(accept ? { accept } : {}) };
  const conversion = served.conversion;
  if (!conversion) {
    const response = await route({ ...{}, ...ctx, request: { ...{}, ...ctx.request, headers } }, body);
    return convertResponse(response, served, served, served.readConversion!);
  }
  const stored = ctx.core.registry.storageOf(served);
  if (!stored) throw errors.pathNotFound(ctx.info.path);
  const query = storedQuery(ctx.request.query, conversion);
  const inner: RestContext = { ...{}, ...ctx, definition: stored, servedAs: served, request: { ...{}, ...ctx.request, headers, query } };
  const out = (response: ApiResponse) => convertResponse(response, served, stored, conversion.fromStorage);
  switch (ctx.info.verb) {
    case 'create':
    case 'update': {
      const object = withTypeMeta(requireObject(body.value, served), served);
      ctx.warnings.push(...typeCheck(object, served, fieldValidationOf(ctx.request.query), ctx));
      const response = await route(
        { ...{}, ...inner, duplicateFields: undefined, numberLiterals: undefined },
        { ...{}, ...body, value: await conversion.toStorage(object) },
      );
      return out({ ...{}, ...response, headers: withWarnings(response.headers, ctx.warnings) });
    }
    case 'patch': {
      const kind = patchKindOf(body.mediaType, ctx.request.headers['content-type'], ctx.definition);
      checkPatchShape(kind, body.value);
      if (kind === 'apply') {
        const config = withTypeMeta(requireObject(structuredClone(body.value), served), served);
        return out(await route(inner, { ...{}, ...body, value: await conversion.toStorage(config) }));
      }
      // The patch applies to the object as this version shows it.
      const updated = await guardedUpdate(inner, async (current) => {
        const patched = withTypeMeta(
          requireObject(
            applyPatchDocument(kind, await conversion.fromStorage(current.object), body.value, {
              kind: served.kind,
              group: served.group,
              name: ctx.info.name,
              schema: served.schema,
            }),
            served,
          ),
          served,
        );
        ctx.warnings.splice(0, ctx.warnings.length, ...typeCheck(patched, served, fieldValidationOf(ctx.request.query), ctx));
        checkIdentity(ctx, patched);
        return { object: await conversion.toStorage(patched), conditional: pinsResourceVersion(kind, body.value) };
      });
      return json(await conversion.fromStorage(updated), 200, ctx.warnings);
    }
    default:
      return out(await route(inner, body));
  }
}

/** The query with its field selector in the stored version's labels; a label this version does not offer is a 400. */
function storedQuery(query: Record<string, string | undefined>, conversion: VersionConversion): Record<string, string | undefined> {
  const labels = conversion.fieldLabels;
  if (!labels || !query.fieldSelector) return query;
  let selector;
  try {
    selector = parseFieldSelector(query.fieldSelector);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw errors.badRequest(`unable to parse requirement in fieldSelector: ${errorMessage(err)}`);
  }
  const terms = selector.terms.map(({ field, operator, value }) => {
    const label = Object.hasOwn(labels, field) ? labels[field] : undefined;
    if (label === undefined) throw errors.badRequest(`field label not supported: ${field}`);
    return `${label}${operator}${escapeFieldSelectorValue(value)}`;
  });
  return { ...{}, ...query, fieldSelector: terms.join(',') };
}

function withWarnings(headers: Record<string, string> | undefined, warnings: string[]): Record<string, string> | undefined {
  if (warnings.length === 0 || headers?.warning) return headers;
  return { ...{}, ...headers, warning: warningHeaders(warnings) };
}

/** An object of the kind as the served version shows it; anything else as it is. */
type Converter = <T>(object: T) => Promise<T | KubeObject>;

async function convertResponse(
  response: ApiResponse,
  served: ResourceDefinition,
  stored: ResourceDefinition,
  fromStorage: (object: KubeObject) => KubeObject | Promise<KubeObject>,
): Promise<ApiResponse> {
  // Any version of the kind: a store may hold objects written before its storage version changed.
  const ours = (object: unknown): object is KubeObject => isKubeObject(object) && object.kind === stored.kind;
  const convert: Converter = async (object) => (ours(object) ? fromStorage(object) : object);
  // A bookmark carries only metadata: it changes version, nothing else.
  const bookmark: Converter = async (object) => (ours(object) ? { ...{}, ...object, apiVersion: apiVersionOf(served) } : object);
  if (response.stream) return { ...{}, ...response, stream: convertEvents(response.stream, convert, bookmark) };
  let body = typeof response.body === 'string' ? parseJson(response.body) : response.body;
  if (isJsonObject(body) && body.kind === (stored.listKind ?? `${stored.kind}List`) && Array.isArray(body.items)) {
    body = {
      ...{},
      ...body,
      kind: served.listKind ?? `${served.kind}List`,
      apiVersion: apiVersionOf(served),
      items: await Promise.all(body.items.map(convert)),
    };
  } else body = await convert(body);
  return { ...{}, ...response, body };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function* convertEvents(stream: AsyncIterable<WatchEvent>, convert: Converter, bookmark: Converter): AsyncIterable<WatchEvent> {
  for await (const event of stream) yield { ...{}, ...event, object: await (event.type === 'BOOKMARK' ? bookmark(event.object) : convert(event.object)) };
}
