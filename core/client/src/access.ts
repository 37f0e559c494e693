import { isApiError, RESOURCES, type SelfSubjectAccessReview } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { ClientError } from './errors.js';

export interface AccessQuestion {
  verb: string;
  /** API group; "" for the core group. */
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
}

/**
 * `kubectl auth can-i` for the client's own identity: asks the API server's authorizers, through a
 * SelfSubjectAccessReview, whether the caller may do `question`.
 */
export async function canI(client: Pick<ApiClient, 'create'>, question: AccessQuestion): Promise<{ allowed: boolean; reason?: string }> {
  let review: SelfSubjectAccessReview;
  try {
    review = await client.create<SelfSubjectAccessReview>(RESOURCES.selfsubjectaccessreviews, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: {
        resourceAttributes: {
          verb: question.verb,
          group: question.group,
          resource: question.resource,
          subresource: question.subresource ?? '',
          namespace: question.namespace ?? '',
        },
      },
    });
  } catch (err) {
    // Not even allowed to ask (Kubernetes grants every authenticated user the review; an authorizer may not).
    if (isApiError(err, 'Forbidden')) return { allowed: false, reason: err.message };
    throw err;
  }
  return { allowed: review.status?.allowed === true, ...(review.status?.reason ? { reason: review.status.reason } : {}) };
}

/**
 * For a cluster component at start: fails with one line when the authorizers would refuse it what it
 * needs, instead of letting it start and retry 403s forever (a configuration without a suitable
 * authorizer otherwise looks like a silent hang).
 */
export async function assertCanI(client: Pick<ApiClient, 'create'>, who: string, question: AccessQuestion): Promise<void> {
  const { allowed, reason } = await canI(client, question);
  if (allowed) return;
  const what = `${question.verb} ${question.subresource ? `${question.resource}/${question.subresource}` : question.resource}${question.group ? ` in API group "${question.group}"` : ''}`;
  throw new ClientError('SKIFF_ERR_CLIENT_NOT_AUTHORIZED', { who, what, why: reason ? ` (${reason})` : '' });
}
