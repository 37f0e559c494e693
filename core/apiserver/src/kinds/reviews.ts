import { defineKind, errors, type KubeObject, type ResourceDefinition, type UserInfo } from '@skiff/api';
import type { ApiResponse, AuthnRequest, AuthzAttributes } from '@skiff/kernel';
import type { RestContext } from '../rest/context.js';
import type { KindHandler, KindHandlers } from '../rest/handlers.js';
import { json } from '../rest/respond.js';

const AUTHORIZATION = 'authorization.k8s.io';
const AUTHENTICATION = 'authentication.k8s.io';

/**
 * Review kinds answered by the API server through the kernel's authn and authz hooks, never stored:
 * `kubectl auth can-i` (SelfSubjectAccessReview), `auth can-i --list` (SelfSubjectRulesReview), `auth
 * whoami` (SelfSubjectReview), and for other components TokenReview, SubjectAccessReview and
 * LocalSubjectAccessReview.
 */
const review = (group: string, kind: string, namespaced = false): ResourceDefinition =>
  defineKind({ group, version: 'v1', kind, resource: `${kind.toLowerCase()}s`, namespaced, verbs: ['create'] });

export const selfSubjectAccessReviews = review(AUTHORIZATION, 'SelfSubjectAccessReview');
export const selfSubjectRulesReviews = review(AUTHORIZATION, 'SelfSubjectRulesReview');
export const subjectAccessReviews = review(AUTHORIZATION, 'SubjectAccessReview');
export const localSubjectAccessReviews = review(AUTHORIZATION, 'LocalSubjectAccessReview', true);
export const selfSubjectReviews = review(AUTHENTICATION, 'SelfSubjectReview');
export const tokenReviews = review(AUTHENTICATION, 'TokenReview');

export const REVIEW_KINDS: ResourceDefinition[] = [
  selfSubjectReviews,
  tokenReviews,
  localSubjectAccessReviews,
  selfSubjectAccessReviews,
  selfSubjectRulesReviews,
  subjectAccessReviews,
];

type ReviewHandler = (ctx: RestContext, body: unknown) => Promise<ApiResponse>;

/** Registers each review kind's create. */
export function registerReviewHandlers(handlers: KindHandlers): void {
  const handle =
    (fn: ReviewHandler): KindHandler =>
    (ctx, body) => {
      if (ctx.info.name)
        throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${ctx.request.method} ${ctx.info.path})`);
      return fn(ctx, body.value);
    };
  const at = (definition: ResourceDefinition) => ({ group: definition.group, resource: definition.resource, verb: 'create' });
  handlers
    .register(at(selfSubjectAccessReviews), handle(selfSubjectAccessReview))
    .register(at(selfSubjectRulesReviews), handle(selfSubjectRulesReview))
    .register(at(selfSubjectReviews), handle(selfSubjectReview))
    .register(
      at(subjectAccessReviews),
      handle((ctx, body) => subjectAccessReview(ctx, body, 'SubjectAccessReview')),
    )
    .register(
      at(localSubjectAccessReviews),
      handle((ctx, body) => subjectAccessReview(ctx, body, 'LocalSubjectAccessReview')),
    )
    .register(at(tokenReviews), handle(tokenReview));
}

interface AccessReviewSpec {
  resourceAttributes?: { namespace?: string; verb?: string; group?: string; version?: string; resource?: string; subresource?: string; name?: string };
  nonResourceAttributes?: { path?: string; verb?: string };
}

/** Asks the authorization chain about the caller, exactly as a real request would be asked. */
function selfSubjectAccessReview(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const spec = reviewBody(body).spec as AccessReviewSpec | undefined;
  return accessReview(ctx, 'SelfSubjectAccessReview', spec, ctx.user);
}

/** Asks the authorization chain about the user the review names (`spec.user`, `groups`, `uid`, `extra`). */
function subjectAccessReview(ctx: RestContext, body: unknown, kind: 'SubjectAccessReview' | 'LocalSubjectAccessReview'): Promise<ApiResponse> {
  const object = reviewBody(body);
  const spec = object.spec as (AccessReviewSpec & { user?: string; groups?: string[]; uid?: string; extra?: Record<string, string[]> }) | undefined;
  const causes = [];
  if (!spec?.user && !spec?.groups?.length)
    causes.push({ type: 'FieldValueRequired', field: 'spec.user', message: 'Required value: at least one of user or group must be specified' });
  if (kind === 'LocalSubjectAccessReview') {
    if (spec?.nonResourceAttributes)
      causes.push({ type: 'FieldValueInvalid', field: 'spec.nonResourceAttributes', message: 'Invalid value: disallowed on this kind of request' });
    if (spec?.resourceAttributes && spec.resourceAttributes.namespace !== ctx.info.namespace) {
      causes.push({
        type: 'FieldValueInvalid',
        field: 'metadata.namespace',
        message: `Invalid value: ${JSON.stringify(ctx.info.namespace)}: must match the namespace of the resource attributes`,
      });
    }
  }
  if (causes.length) throw errors.invalid(kind, AUTHORIZATION, object.metadata?.name ?? '', causes);
  const user: UserInfo = {
    username: spec!.user ?? '',
    groups: spec!.groups ?? [],
    ...(spec!.uid ? { uid: spec!.uid } : {}),
    ...(spec!.extra ? { extra: spec!.extra } : {}),
  };
  return accessReview(ctx, kind, spec, user, object.metadata?.namespace ?? ctx.info.namespace);
}

async function accessReview(ctx: RestContext, kind: string, spec: AccessReviewSpec | undefined, user: UserInfo, namespace?: string): Promise<ApiResponse> {
  const resource = spec?.resourceAttributes;
  const nonResource = spec?.nonResourceAttributes;
  if (!resource && !nonResource)
    throw errors.invalid(kind, AUTHORIZATION, '', [
      {
        type: 'FieldValueRequired',
        field: 'spec.resourceAttributes',
        message: 'Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
      },
    ]);
  const attributes: AuthzAttributes = resource
    ? {
        user,
        verb: resource.verb ?? '',
        isResourceRequest: true,
        apiGroup: resource.group ?? '',
        apiVersion: resource.version ?? '',
        resource: resource.resource ?? '',
        subresource: resource.subresource ?? '',
        namespace: resource.namespace ?? '',
        name: resource.name ?? '',
        path: '',
      }
    : {
        user,
        verb: nonResource!.verb ?? '',
        isResourceRequest: false,
        apiGroup: '',
        apiVersion: '',
        resource: '',
        subresource: '',
        namespace: '',
        name: '',
        path: nonResource!.path ?? '',
      };
  const decision = await ctx.core.hooks.authorize.promise(attributes);
  const status = {
    allowed: decision?.decision === 'allow',
    ...(decision?.decision === 'deny' ? { denied: true } : {}),
    ...(decision?.reason ? { reason: decision.reason } : {}),
  };
  const metadata = namespace && kind === 'LocalSubjectAccessReview' ? { namespace, creationTimestamp: null } : { creationTimestamp: null };
  return json({ kind, apiVersion: `${AUTHORIZATION}/v1`, metadata, spec, status }, 201);
}

/** The authorize hook decides request by request and cannot list rules, so the answer says it is incomplete. */
async function selfSubjectRulesReview(_ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const review = reviewBody(body);
  return json(
    {
      kind: 'SelfSubjectRulesReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: review.spec ?? {},
      status: {
        resourceRules: [],
        nonResourceRules: [],
        incomplete: true,
        evaluationError: 'the authorizers of this cluster decide per request and cannot list rules',
      },
    },
    201,
  );
}

async function selfSubjectReview(ctx: RestContext): Promise<ApiResponse> {
  const { username, uid, groups, extra } = ctx.user;
  return json(
    {
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      status: { userInfo: { username, ...(uid ? { uid } : {}), groups, ...(extra ? { extra } : {}) } },
    },
    201,
  );
}

/** Runs the authentication chain on the token, as if a request had carried it. */
async function tokenReview(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const object = reviewBody(body);
  const spec = object.spec as { token?: string; audiences?: string[] } | undefined;
  if (!spec?.token) throw errors.invalid('TokenReview', AUTHENTICATION, '', [{ type: 'FieldValueRequired', field: 'spec.token', message: 'Required value' }]);
  const request: AuthnRequest = { headers: { authorization: `Bearer ${spec.token}` }, errors: [] };
  const result = await ctx.core.hooks.authenticate.promise(request);
  const user = result?.user;
  const status = user
    ? {
        authenticated: true,
        user: { username: user.username, ...(user.uid ? { uid: user.uid } : {}), groups: user.groups, ...(user.extra ? { extra: user.extra } : {}) },
        ...(spec.audiences ? { audiences: spec.audiences } : {}),
      }
    : { user: {}, ...(request.errors.length ? { error: request.errors.join('; ') } : {}) };
  return json({ kind: 'TokenReview', apiVersion: `${AUTHENTICATION}/v1`, metadata: { creationTimestamp: null }, spec, status }, 201);
}

function reviewBody(body: unknown): KubeObject {
  if (body === undefined) return { metadata: {} };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.badRequest('the request body must be an object');
  return body as KubeObject;
}
