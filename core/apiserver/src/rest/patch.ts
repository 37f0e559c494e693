import { ApiError, errorMessage, errors, isJsonObject, type KubeObject } from '@skiff/api';
import { applyApplyPatch, applyWithManagedFields, DEFAULT_MERGE_KEYS, fieldSetOf, schemaMergeKeys, undeclaredFields, type FieldSet } from '@skiff/api/patch';
import { type ObjectSchema } from '@skiff/api/schema';
import type { ApiResponse } from '@skiff/kernel';
import type { DecodedBody } from '../pipeline/decode-body.js';
import { strictWarnings, yamlDuplicatesError } from '../pipeline/duplicate-fields.js';
import { fieldValidationOf, requireObject, typeCheck, withTypeMeta, type FieldValidation } from '../pipeline/type-check.js';
import { guardedUpdate } from './commit-update.js';
import type { RestContext } from './context.js';
import { createChecked } from './create.js';
import { objectKey } from './keys.js';
import { managedWrite } from './field-managers.js';
import { pauseIfLarge, sizeWithoutManagedFields } from './object-size.js';
import { applyPatchDocument, checkPatchShape, patchKindOf, pinsResourceVersion, type PatchKind } from './patch-document.js';
import { json } from './respond.js';
import { checkIdentity } from './update.js';

/**
 * PATCH of an object or its status: merge, strategic merge, JSON patch or server-side apply. The patched
 * result is type-checked like a PUT body and goes through the same update rules. An apply patch to an
 * object that does not exist creates it (201).
 */
export async function patchObject(ctx: RestContext, body: DecodedBody): Promise<ApiResponse> {
  const kind = patchKindOf(body.mediaType, ctx.request.headers['content-type'], ctx.definition);
  const patch = body.value;
  checkPatchShape(kind, patch);
  const validation = fieldValidationOf(ctx.request.query);
  const manager = ctx.request.query.fieldManager;
  if (kind === 'apply' && !manager) throw errors.badRequest('fieldManager is required for apply patch requests');
  const { definition, info } = ctx;

  if (kind === 'apply' && !info.subresource && !(await ctx.core.store.get(objectKey(definition, info.namespace, info.name))))
    return createByApply(ctx, patch, manager!, validation);

  const conditional = pinsResourceVersion(kind, patch);
  const updated = await guardedUpdate(ctx, async (current) => {
    const patched = withTypeMeta(requireObject(patchOnce(ctx, kind, current.object, patch, manager), definition), definition);
    // Refused before the type check and defaults walk it.
    await pauseIfLarge(sizeWithoutManagedFields(ctx, patched, 'the patched'));
    const warnings = kind === 'apply' ? appliedDuplicates(ctx, validation) : [];
    ctx.warnings.splice(0, ctx.warnings.length, ...warnings, ...typeCheck(patched, definition, validation, kind === 'apply' ? withoutDuplicates(ctx) : ctx));
    checkIdentity(ctx, patched);
    return { object: patched, conditional };
  });
  return json(updated, 200, ctx.warnings);
}

/** Server-side apply of an object that does not exist yet: the applied configuration is created (201). */
async function createByApply(ctx: RestContext, applied: unknown, manager: string, validation: FieldValidation): Promise<ApiResponse> {
  const { definition, info } = ctx;
  if (!isJsonObject(applied) || !applied.apiVersion || !applied.kind) throw errors.badRequest('an apply patch must carry apiVersion and kind');
  const config = withTypeMeta(requireObject(structuredClone(applied), definition), definition);
  await pauseIfLarge(sizeWithoutManagedFields(ctx, config, 'the applied'));
  checkDeclared(ctx, config);
  ctx.warnings.push(...appliedDuplicates(ctx, validation), ...typeCheck(config, definition, validation, withoutDuplicates(ctx)));
  checkIdentity(ctx, config);
  const object = applyByManager(ctx, undefined, config, manager);
  object.metadata.name = info.name;
  return json(await createChecked(ctx, object), 201, ctx.warnings);
}

/**
 * An applied configuration is read as a value of the kind's schema: fields it does not declare fail the apply
 * whatever the field validation, in upstream's words (a 500 without a reason, as kube-apiserver sends it).
 */
function checkDeclared(ctx: RestContext, config: KubeObject): void {
  const { definition } = ctx;
  if (!definition.schema) return;
  const undeclared = undeclaredFields(definition.schema, config);
  if (undeclared.length === 0) return;
  // A kind keeping fields its schema does not declare (a custom resource preserving unknown fields) decodes without any.
  if (definition.decode && definition.decode(structuredClone(config), true).unknownFields.length === 0) return;
  const messages = undeclared.map((path) => `${path}: field not declared in schema`);
  const detail = messages.length === 1 ? messages[0] : ['errors:', ...messages.map((message) => `  ${message}`)].join('\n');
  const { namespace = '', name = '' } = config.metadata ?? {};
  const object = `${namespace}/${name}; ${definition.group}/${definition.version}, Kind=${definition.kind}`;
  throw errors.unknown(`failed to create typed patch object (${object}): ${detail}`);
}

/**
 * Keys an apply patch repeats, judged after the apply as kube-apiserver does, by Go's YAML decoder whatever the
 * patch's text (kubectl sends JSON, which is YAML too): a 400 with Strict, a warning per key with Warn.
 */
function appliedDuplicates(ctx: RestContext, validation: FieldValidation): string[] {
  const repeated = validation === 'Ignore' ? [] : (ctx.duplicateFields?.().fields ?? []);
  if (repeated.length === 0) return [];
  const error = yamlDuplicatesError(repeated);
  if (validation === 'Strict') throw errors.badRequest(`error strict decoding YAML: ${error}`);
  return strictWarnings([error]);
}

/** The body facts without the repeats, for the type check of an apply (whose repeats appliedDuplicates judged). */
function withoutDuplicates(ctx: RestContext): RestContext {
  return { ...{}, ...ctx, duplicateFields: undefined };
}

/** Server-side apply with field ownership: conflicts (409 unless `force=true`), fields no longer applied removed. */
function applyByManager(ctx: RestContext, current: KubeObject | undefined, config: KubeObject, manager: string): KubeObject {
  const { definition, info } = ctx;
  const rules = definition.schema ? schemaMergeKeys(definition.schema, true) : DEFAULT_MERGE_KEYS;
  const force = ctx.request.query.force === 'true';
  ctx.managedFieldsRecorded = true;
  // kubectl moving an object from client-side to server-side apply: the fields of its last client-side
  // configuration may change hands without a conflict, and that configuration follows the server-side one.
  const lastApplied = manager === KUBECTL_MANAGER ? current?.metadata.annotations?.[LAST_APPLIED] : undefined;
  const allowed = lastApplied === undefined ? undefined : lastAppliedFields(definition.schema, lastApplied);
  try {
    const result = applyWithManagedFields(
      current,
      config,
      manager,
      force,
      { ...{}, ...managedWrite(ctx), kind: definition.kind, group: definition.group, name: info.name },
      (live, applied) => applyApplyPatch(live, applied, rules),
      allowed,
    );
    if (lastApplied !== undefined)
      result.metadata.annotations = { ...{}, ...result.metadata.annotations, [LAST_APPLIED]: JSON.stringify(withoutLastApplied(config)) };
    return result;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw errors.invalid(definition.kind, definition.group, info.name, [{ type: 'FieldValueInvalid', field: 'patch', message: errorMessage(err) }]);
  }
}

const KUBECTL_MANAGER = 'kubectl';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function lastAppliedFields(schema: ObjectSchema | undefined, text: string): FieldSet | undefined {
  try {
    return fieldSetOf(schema, JSON.parse(text));
  } catch {
    return undefined;
  }
}

function withoutLastApplied(config: KubeObject): KubeObject {
  const copy = structuredClone(config);
  if (copy.metadata?.annotations) {
    delete copy.metadata.annotations[LAST_APPLIED];
    if (Object.keys(copy.metadata.annotations).length === 0) delete copy.metadata.annotations;
  }
  return copy;
}

function patchOnce(ctx: RestContext, kind: PatchKind, current: KubeObject, patch: unknown, manager: string | undefined): KubeObject {
  const { definition, info } = ctx;
  // The patch functions build a new document and never modify their inputs, so the stored object is safe.
  if (kind !== 'apply')
    return applyPatchDocument(kind, current, patch, { kind: definition.kind, group: definition.group, name: info.name, schema: definition.schema });
  checkDeclared(ctx, patch as KubeObject);
  return applyByManager(ctx, current, patch as KubeObject, manager!);
}
