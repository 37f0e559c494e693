import { errors, readJsonPath, selectorString, writeJsonPath, type KubeObject, type ResourceDefinition, type Scale } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import type { DecodedBody } from '../pipeline/decode-body.js';
import { requireSubresourceBody } from '../pipeline/type-check.js';
import { guardedUpdate } from './commit-update.js';
import type { RestContext } from './context.js';
import { applyPatchDocument, checkPatchShape, patchKindOf, pinsResourceVersion } from './patch-document.js';
import { readObject } from './read.js';
import { writePrecondition } from './resource-version.js';
import { json } from './respond.js';
import { waitForRequestedRevision } from './wait-for-revision.js';

const SCALE_API_VERSION = 'autoscaling/v1';
const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

const DEFAULT_SCALE = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' };

/** The autoscaling/v1 Scale view of an object, read where its kind's scale definition says. */
export function toScale(object: KubeObject, definition?: Pick<ResourceDefinition, 'scale'>): Scale {
  const paths = definition?.scale ?? DEFAULT_SCALE;
  const { name, namespace, uid, resourceVersion, creationTimestamp } = object.metadata;
  const integer = (path: string) => {
    const value = readJsonPath(object, path)[0];
    return typeof value === 'number' ? value : 0;
  };
  return {
    kind: 'Scale',
    apiVersion: SCALE_API_VERSION,
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: integer(paths.specReplicasPath) },
    status: {
      replicas: integer(paths.statusReplicasPath),
      selector: paths.labelSelectorPath ? selectorString(readJsonPath(object, paths.labelSelectorPath)[0]) : '',
    },
  };
}

export async function getScale(ctx: RestContext): Promise<ApiResponse> {
  await waitForRequestedRevision(ctx);
  return json(toScale((await readObject(ctx)).object, ctx.definition));
}

/** PUT of a Scale: its spec.replicas goes to the parent (guarded by the Scale's resourceVersion). */
export async function updateScale(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const scale = checkScale(ctx, body);
  return json(await writeReplicas(ctx, () => scale, writePrecondition(scale.metadata.resourceVersion) !== undefined), 200, ctx.warnings);
}

/** PATCH of a Scale (kubectl scale sends a merge patch `{"spec":{"replicas":5}}`). */
export async function patchScale(ctx: RestContext, body: DecodedBody): Promise<ApiResponse> {
  const kind = patchKindOf(body.mediaType, ctx.request.headers['content-type']);
  if (kind === 'apply') throw errors.unsupportedMediaType(body.mediaType);
  checkPatchShape(kind, body.value);
  return json(
    await writeReplicas(
      ctx,
      (current) =>
        checkScale(ctx, applyPatchDocument(kind, toScale(current, ctx.definition), body.value, { kind: 'Scale', group: 'autoscaling', name: ctx.info.name })),
      pinsResourceVersion(kind, body.value),
    ),
    200,
    ctx.warnings,
  );
}

/** `pinned`: the client named a resourceVersion, so a concurrent write is its 409 rather than a retry. */
async function writeReplicas(ctx: RestContext, scaleOf: (current: KubeObject) => Scale, pinned: boolean): Promise<Scale> {
  const updated = await guardedUpdate(ctx, (current) => {
    const scale = scaleOf(current.object);
    const next = structuredClone(current.object);
    writeJsonPath(next, (ctx.definition.scale ?? DEFAULT_SCALE).specReplicasPath, scale.spec?.replicas);
    next.metadata.resourceVersion = scale.metadata.resourceVersion || current.object.metadata.resourceVersion;
    return { object: next, conditional: pinned };
  });
  return toScale(updated, ctx.definition);
}

function checkScale(ctx: RestContext, body: unknown): Scale {
  const scale = requireSubresourceBody<Scale>(ctx, body, SCALE_KIND, 'a Scale');
  if (scale.kind !== undefined && scale.kind !== 'Scale')
    throw errors.badRequest(`the kind in the data (${scale.kind}) does not match the expected kind (Scale)`);
  if (scale.metadata.name && scale.metadata.name !== ctx.info.name)
    throw errors.badRequest(`the name of the object (${scale.metadata.name}) does not match the name on the URL (${ctx.info.name})`);
  const replicas = scale.spec?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)
    throw errors.invalid('Scale', 'autoscaling', ctx.info.name, [
      { type: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` },
    ]);
  return scale;
}
