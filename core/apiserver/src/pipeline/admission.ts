import { deepFreeze, errors, type KubeObject } from '@skiff/api';
import { isPluginFailure, tracingActive, withSpan, type AdmissionOperation, type AdmissionRequest, type Hooks } from '@skiff/kernel';
import { objectKey } from '../rest/keys.js';
import { withPluginFailures } from './error-response.js';
import { step } from './trace.js';
import type { RestContext } from '../rest/context.js';

export interface AdmissionTarget {
  operation: AdmissionOperation;
  object?: KubeObject;
  oldObject?: KubeObject;
  /** The kind of `object` when it is not the resource's own (a Binding, an Eviction). */
  kind?: { group: string; version: string; kind: string };
}

export function admissionRequest(ctx: RestContext, target: AdmissionTarget): AdmissionRequest {
  const { definition, info, core } = ctx;
  return {
    operation: target.operation,
    kind: target.kind ?? { group: definition.group, version: definition.version, kind: definition.kind },
    resource: { group: definition.group, version: definition.version, resource: definition.resource },
    subresource: info.subresource,
    namespace: definition.namespaced ? info.namespace : '',
    name: target.object?.metadata?.name ?? target.oldObject?.metadata?.name ?? info.name,
    object: target.object,
    oldObject: target.oldObject,
    user: ctx.user,
    dryRun: ctx.dryRun,
    async get(resource, namespace, name) {
      const other = core.registry.get(resource.group, resource.resource);
      if (!other) return undefined;
      return (await core.store.get(objectKey(other, namespace, name)))?.object;
    },
    onFinished(callback) {
      ctx.finishers.push(callback);
    },
    warnings: ctx.warnings,
    auditAnnotations: ctx.auditAnnotations,
  };
}

/** Mutating admission: plugins may change or replace `request.object`; the result is what goes on. */
export async function mutate(ctx: RestContext, request: AdmissionRequest): Promise<KubeObject | undefined> {
  await admit(ctx.core.hooks.mutate, request);
  return request.object;
}

/** Validating admission: every plugin sees the final object, frozen, and may only reject. */
export async function validate(ctx: RestContext, request: AdmissionRequest): Promise<void> {
  if (request.object) deepFreeze(request.object);
  await admit(ctx.core.hooks.validate, request);
}

/**
 * Runs one admission chain. A rejection (AdmissionError) leaves as it is; a plugin that failed on its own is a
 * 500 naming it, the way Kubernetes names a failing webhook — the stack goes to the log (see errorResponse).
 */
async function admit(hook: Hooks['mutate' | 'validate'], request: AdmissionRequest): Promise<void> {
  try {
    await hook.promise(request);
  } catch (err) {
    if (!isPluginFailure(err)) throw err;
    throw withPluginFailures(errors.internal(`admission plugin "${err.tapName}" failed: ${err.detail}`), [err]);
  }
}

/**
 * CONNECT admission (exec, attach, port-forward, proxy), as kube-apiserver runs it before a connection is
 * handed on: the request's options (`PodExecOptions`, …) are the object, through the mutating chain and then
 * the validating one; either may refuse, and nothing they change is used.
 */
export async function admitConnect(ctx: RestContext, options: Record<string, unknown> & { kind: string }): Promise<void> {
  const object = { apiVersion: 'v1', ...options } as KubeObject;
  const request = admissionRequest(ctx, { operation: 'CONNECT', object, kind: { group: '', version: 'v1', kind: options.kind } });
  await mutate(ctx, request);
  request.object = object;
  await validate(ctx, request);
}

/**
 * The write stages shared by create, update and patch, after the body was decoded and type-checked:
 * defaults → mutating admission → defaults again → semantic validation (422) → validating admission. Returns the final
 * object, deeply frozen.
 */
export async function admitWrite(ctx: RestContext, operation: 'CREATE' | 'UPDATE', object: KubeObject, oldObject?: KubeObject): Promise<KubeObject> {
  const { definition } = ctx;
  definition.defaults?.(object);
  const request = admissionRequest(ctx, { operation, object, oldObject });
  const admitted = (await step('mutating admission', () => mutate(ctx, request))) ?? object;
  // As kube-apiserver defaults what a mutating webhook returned: what mutation added (an init container, a
  // volume) gets its defaults too. Defaulting only fills what is unset, so what was defaulted stays as it is.
  definition.defaults?.(admitted);
  // A write through a converted version is held to that version's rules where it has its own.
  const validateWrite = ctx.servedAs?.conversion?.validate ?? definition.validate;
  const validateAdmitted = () => validateWrite?.(admitted, oldObject, ctx.info.subresource) ?? [];
  const causes = tracingActive() ? withSpan({ name: 'validation', kind: 'step' }, validateAdmitted) : validateAdmitted();
  if (causes.length > 0) throw errors.invalid(definition.kind, definition.group, admitted.metadata.name ?? '', causes);
  request.object = admitted;
  await step('validating admission', () => validate(ctx, request));
  return admitted;
}
