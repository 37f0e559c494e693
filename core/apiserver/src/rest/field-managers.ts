// Records who wrote what: every create, update and patch updates metadata.managedFields through
// @skiff/api's managed-fields functions, with the kind's schema deciding what a field is.
import { apiVersionOf, type KubeObject } from '@skiff/api';
import { recordUpdate, type ManagedWrite } from '@skiff/api/patch';
import type { RestContext } from './context.js';
import { timestamp } from './metadata.js';

/**
 * The field manager of a request: the `fieldManager` parameter, or like Kubernetes the client's user agent up
 * to its first `/` (`kubectl/v1.36.0 (linux/amd64)…` → `kubectl`).
 */
export function managerOf(ctx: RestContext): string {
  const given = ctx.request.query.fieldManager;
  if (given) return given;
  const agent = ctx.request.headers['user-agent'] ?? '';
  return agent.split('/')[0]!.trim() || 'unknown';
}

/** What managed-fields functions need to know about the write. */
export function managedWrite(ctx: RestContext): ManagedWrite {
  const { definition, info } = ctx;
  return {
    ...{},
    ...(definition.schema ? { schema: definition.schema } : {}),
    apiVersion: apiVersionOf(definition),
    subresource: info.subresource,
    hasStatus: Boolean(definition.hasStatus),
    now: timestamp(),
  };
}

/** Records a non-apply write's manager (apply writes record theirs while merging). */
export function recordWrite(ctx: RestContext, next: KubeObject, old: KubeObject | undefined): void {
  if (ctx.managedFieldsRecorded) return;
  recordUpdate(next, old, managerOf(ctx), managedWrite(ctx));
}
