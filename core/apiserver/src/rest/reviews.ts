import { errors, type KubeObject } from '@skiff/api';
import type { ApiResponse, AuthzAttributes, ResourceDefinition } from '@skiff/kernel';
import type { RestContext } from './context.js';
import { json } from './respond.js';

/**
 * Review kinds answered by the API server rather than stored: `kubectl auth can-i` (SelfSubjectAccessReview),
 * `auth can-i --list` (SelfSubjectRulesReview) and `auth whoami` (SelfSubjectReview).
 */
const CREATE_ONLY = ['create'];

export const REVIEW_DEFINITIONS: ResourceDefinition[] = [
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    kind: 'SelfSubjectAccessReview',
    resource: 'selfsubjectaccessreviews',
    singular: 'selfsubjectaccessreview',
    namespaced: false,
    verbs: CREATE_ONLY,
  },
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    kind: 'SelfSubjectRulesReview',
    resource: 'selfsubjectrulesreviews',
    singular: 'selfsubjectrulesreview',
    namespaced: false,
    verbs: CREATE_ONLY,
  },
  {
    group: 'authentication.k8s.io',
    version: 'v1',
    kind: 'SelfSubjectReview',
    resource: 'selfsubjectreviews',
    singular: 'selfsubjectreview',
    namespaced: false,
    verbs: CREATE_ONLY,
  },
];

type ReviewHandler = (ctx: RestContext, body: unknown) => Promise<ApiResponse>;

export function reviewHandler(group: string, resource: string): ReviewHandler | undefined {
  if (group === 'authorization.k8s.io' && resource === 'selfsubjectaccessreviews') return selfSubjectAccessReview;
  if (group === 'authorization.k8s.io' && resource === 'selfsubjectrulesreviews') return selfSubjectRulesReview;
  if (group === 'authentication.k8s.io' && resource === 'selfsubjectreviews') return selfSubjectReview;
  return undefined;
}

interface AccessReviewSpec {
  resourceAttributes?: { namespace?: string; verb?: string; group?: string; version?: string; resource?: string; subresource?: string; name?: string };
  nonResourceAttributes?: { path?: string; verb?: string };
}

/** Asks the authorization chain about the caller, exactly as a real request would be asked. */
async function selfSubjectAccessReview(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const spec = reviewBody(body).spec as AccessReviewSpec | undefined;
  const resource = spec?.resourceAttributes;
  const nonResource = spec?.nonResourceAttributes;
  if (!resource && !nonResource)
    throw errors.invalid('SelfSubjectAccessReview', 'authorization.k8s.io', '', [
      {
        type: 'FieldValueRequired',
        field: 'spec.resourceAttributes',
        message: 'Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
      },
    ]);
  const attributes: AuthzAttributes = resource
    ? {
        user: ctx.user,
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
        user: ctx.user,
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
  return json({ kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec, status }, 201);
}

/** The authorize hook decides request by request and cannot list rules, so the answer says it is incomplete. */
async function selfSubjectRulesReview(ctx: RestContext, body: unknown): Promise<ApiResponse> {
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

function reviewBody(body: unknown): KubeObject {
  if (body === undefined) return { metadata: {} };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.badRequest('the request body must be an object');
  return body as KubeObject;
}
