import type { SubjectAccessReview, SubjectAccessReviewSpec, SubjectAccessReviewStatus } from '@skiff/api';
import type { AuthzAttributes, AuthzDecision } from '@skiff/kernel';
import { SUBJECT_ACCESS_REVIEW_API_VERSION } from './names.js';

/** Keeps only the fields that have a value, as the API's `omitempty` does. */
function present<T extends Record<string, string>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== '')) as Partial<T>;
}

/** What the webhook is asked: the request's attributes and who makes it, as a SubjectAccessReview's spec. */
export function reviewSpec(attributes: AuthzAttributes): SubjectAccessReviewSpec {
  const { user } = attributes;
  const extra = user.extra && Object.keys(user.extra).length ? Object.fromEntries(Object.entries(user.extra).sort(([a], [b]) => (a < b ? -1 : 1))) : undefined;
  return {
    ...{},
    ...(attributes.isResourceRequest
      ? {
          resourceAttributes: present({
            namespace: attributes.namespace,
            verb: attributes.verb,
            group: attributes.apiGroup,
            version: attributes.apiVersion,
            resource: attributes.resource,
            subresource: attributes.subresource,
            name: attributes.name,
          }),
        }
      : { nonResourceAttributes: present({ path: attributes.path, verb: attributes.verb }) }),
    ...(user.username ? { user: user.username } : {}),
    ...(user.groups.length ? { groups: [...user.groups] } : {}),
    ...(extra ? { extra } : {}),
    ...(user.uid ? { uid: user.uid } : {}),
  };
}

export function reviewRequest(spec: SubjectAccessReviewSpec): SubjectAccessReview {
  return { apiVersion: SUBJECT_ACCESS_REVIEW_API_VERSION, kind: 'SubjectAccessReview', metadata: {}, spec } as SubjectAccessReview;
}

/** The answer's status, or throws saying why the answer is not a SubjectAccessReview of the version asked. */
export function reviewStatus(answer: unknown): SubjectAccessReviewStatus {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new Error('the answer is not a JSON object');
  const review = answer as Partial<SubjectAccessReview>;
  if (review.apiVersion !== SUBJECT_ACCESS_REVIEW_API_VERSION || review.kind !== 'SubjectAccessReview')
    throw new Error(
      `expected a SubjectAccessReview of ${SUBJECT_ACCESS_REVIEW_API_VERSION}, got ${JSON.stringify(review.kind ?? null)} of ${JSON.stringify(review.apiVersion ?? null)}`,
    );
  const status = review.status;
  if (typeof status !== 'object' || status === null) throw new Error('the answer has no status');
  return status;
}

/** allowed: allow; denied: deny; neither: no opinion, so the next authorizer decides. */
export function decisionOf(status: SubjectAccessReviewStatus): AuthzDecision {
  const reason = typeof status.reason === 'string' && status.reason ? { reason: status.reason } : {};
  if (status.allowed === true) return { decision: 'allow', ...reason };
  if (status.denied === true) return { decision: 'deny', ...reason };
  return undefined;
}
