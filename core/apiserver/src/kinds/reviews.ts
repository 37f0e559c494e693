import {
  defineKind,
  errors,
  isJsonObject,
  RESOURCES,
  type KubeObject,
  type LocalSubjectAccessReview,
  type ResourceDefinition,
  type ResourceType,
  type SelfSubjectAccessReview,
  type SelfSubjectAccessReviewSpec,
  type SelfSubjectReview,
  type SelfSubjectRulesReview,
  type SubjectAccessReview,
  type TokenReview,
  type UserInfo,
} from '@skiff/api';
import type { ApiResponse, AuthnRequest, AuthzAttributes, RulesRequest } from '@skiff/kernel';
import type { RestContext } from '../rest/context.js';
import type { KindHandler, KindHandlers } from '../rest/handlers.js';
import { json } from '../rest/respond.js';

const AUTHORIZATION = RESOURCES.subjectaccessreviews.group;
const AUTHENTICATION = RESOURCES.tokenreviews.group;

/**
 * Review kinds answered by the API server through the kernel's authn and authz hooks, never stored:
 * `kubectl auth can-i` (SelfSubjectAccessReview), `auth can-i --list` (SelfSubjectRulesReview), `auth
 * whoami` (SelfSubjectReview), and for other components TokenReview, SubjectAccessReview and
 * LocalSubjectAccessReview.
 */
const review = <T extends KubeObject>(coordinates: ResourceType): ResourceDefinition => defineKind<T>({ ...{}, ...coordinates, verbs: ['create'] });

export const selfSubjectAccessReviews = review<SelfSubjectAccessReview>(RESOURCES.selfsubjectaccessreviews);
export const selfSubjectRulesReviews = review<SelfSubjectRulesReview>(RESOURCES.selfsubjectrulesreviews);
export const subjectAccessReviews = review<SubjectAccessReview>(RESOURCES.subjectaccessreviews);
export const localSubjectAccessReviews = review<LocalSubjectAccessReview>(RESOURCES.localsubjectaccessreviews);
export const selfSubjectReviews = review<SelfSubjectReview>(RESOURCES.selfsubjectreviews);
export const tokenReviews = review<TokenReview>(RESOURCES.tokenreviews);

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

/** Asks the authorization chain about the caller, exactly as a real request would be asked. */
function selfSubjectAccessReview(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const spec = reviewBody<SelfSubjectAccessReview>(body).spec;
  return accessReview(ctx, 'SelfSubjectAccessReview', spec, ctx.user);
}

/** Asks the authorization chain about the user the review names (`spec.user`, `groups`, `uid`, `extra`). */
function subjectAccessReview(ctx: RestContext, body: unknown, kind: 'SubjectAccessReview' | 'LocalSubjectAccessReview'): Promise<ApiResponse> {
  const object = reviewBody<SubjectAccessReview | LocalSubjectAccessReview>(body);
  const spec = object.spec;
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
  // Without a spec there is no user or group, so the causes are never empty then.
  if (causes.length || !spec) throw errors.invalid(kind, AUTHORIZATION, object.metadata?.name ?? '', causes);
  const user: UserInfo = {
    username: spec.user ?? '',
    groups: spec.groups ?? [],
    ...(spec.uid ? { uid: spec.uid } : {}),
    ...(spec.extra ? { extra: spec.extra } : {}),
  };
  return accessReview(ctx, kind, spec, user, object.metadata?.namespace ?? ctx.info.namespace);
}

async function accessReview(
  ctx: RestContext,
  kind: string,
  spec: SelfSubjectAccessReviewSpec | undefined,
  user: UserInfo,
  namespace?: string,
): Promise<ApiResponse> {
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

/**
 * The rules the caller has in `spec.namespace`, from the authorizers that list theirs (the `authorizationRules`
 * hook). With none tapping it, or one that cannot list everything it allows, the answer says it is incomplete.
 */
async function selfSubjectRulesReview(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const review = reviewBody<SelfSubjectRulesReview>(body);
  const namespace = review.spec?.namespace ?? '';
  const hook = ctx.core.hooks.authorizationRules;
  const request: RulesRequest = { user: ctx.user, namespace, resourceRules: [], nonResourceRules: [], incomplete: false, evaluationErrors: [] };
  if (hook.taps.length === 0) {
    request.incomplete = true;
    request.evaluationErrors.push('no authorizer of this cluster lists its rules');
  } else {
    await hook.promise(request);
  }
  return json(
    {
      kind: 'SelfSubjectRulesReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: review.spec ?? {},
      status: {
        resourceRules: request.resourceRules,
        nonResourceRules: request.nonResourceRules,
        incomplete: request.incomplete,
        ...(request.evaluationErrors.length ? { evaluationError: request.evaluationErrors.join('; ') } : {}),
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
  const spec = reviewBody<TokenReview>(body).spec;
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

/**
 * A review as the client sent it. Reviews are answered, never decoded or stored: the handlers read the
 * fields their kind declares and expect any of them to be missing.
 */
function reviewBody<T extends KubeObject>(body: unknown): Partial<T> {
  if (body === undefined) return {};
  if (!isJsonObject(body)) throw errors.badRequest('the request body must be an object');
  return body as Partial<T>;
}
