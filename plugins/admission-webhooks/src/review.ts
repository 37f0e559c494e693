// The AdmissionReview a webhook receives, and what of its answer the API server takes.
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '@skiff/api';
import type { AdmissionRequest } from '@skiff/kernel';
import type { GroupVersionKind, GroupVersionResource } from './matching.js';

/** The admission.k8s.io versions of AdmissionReview spoken, preferred first (v1beta1 has the same shape). */
export const REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export type ReviewVersion = (typeof REVIEW_VERSIONS)[number];

/** The first AdmissionReview version the webhook accepts that the API server speaks, or undefined. */
export function reviewVersionFor(accepted: readonly string[] | undefined): ReviewVersion | undefined {
  return (accepted ?? []).find((v): v is ReviewVersion => (REVIEW_VERSIONS as readonly string[]).includes(v));
}

/** The request as a webhook matched it: as itself, or as an equivalent resource in another version. */
export interface Invocation {
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

const OPTIONS_KIND: Record<string, string | undefined> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

const apiVersionOf = (kind: GroupVersionKind) => (kind.group ? `${kind.group}/${kind.version}` : kind.version);

/** The object in the version the webhook matched (the same schema: only `apiVersion` changes). */
export function inVersion<T extends KubeObject | undefined>(object: T, kind: GroupVersionKind): T {
  if (!object || object.apiVersion === apiVersionOf(kind) || object.kind !== kind.kind) return object;
  return { ...{}, ...object, apiVersion: apiVersionOf(kind) };
}

export interface AdmissionReviewRequest {
  apiVersion: string;
  kind: 'AdmissionReview';
  request: Record<string, unknown> & { uid: string };
}

/** Builds the AdmissionReview for one call of one webhook (every call has its own uid). */
export function buildReview(request: AdmissionRequest, invocation: Invocation, version: ReviewVersion): AdmissionReviewRequest {
  const optionsKind = OPTIONS_KIND[request.operation];
  const object = inVersion(request.object, invocation.kind);
  const oldObject = inVersion(request.oldObject, invocation.kind);
  return {
    apiVersion: `admission.k8s.io/${version}`,
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: invocation.kind,
      resource: invocation.resource,
      ...(request.subresource ? { subResource: request.subresource } : {}),
      requestKind: request.kind,
      requestResource: request.resource,
      ...(request.subresource ? { requestSubResource: request.subresource } : {}),
      ...(request.name ? { name: request.name } : {}),
      ...(request.namespace ? { namespace: request.namespace } : {}),
      operation: request.operation,
      userInfo: request.user,
      object: object ?? null,
      oldObject: oldObject ?? null,
      dryRun: request.dryRun,
      options: optionsKind ? { kind: optionsKind, apiVersion: 'meta.k8s.io/v1', ...(request.dryRun ? { dryRun: ['All'] } : {}) } : null,
    },
  };
}

export interface ReviewStatus {
  code?: number;
  message?: string;
  reason?: string;
  status?: string;
  details?: unknown;
  metadata?: unknown;
}

/** What the API server takes from a webhook's answer. */
export interface ReviewResponse {
  allowed: boolean;
  status?: ReviewStatus;
  /** The decoded JSON patch operations, when the webhook sent one. */
  patch?: unknown;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** The answer is not an AdmissionReview answering this request: a call failure, subject to failurePolicy. */
export class InvalidResponse extends Error {
  override readonly name = 'InvalidResponse';
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks a webhook's answer against the review sent, as kube-apiserver does, and decodes its patch. */
export function readResponse(sent: AdmissionReviewRequest, answer: unknown, mutating: boolean): ReviewResponse {
  if (!isRecord(answer)) throw new InvalidResponse('the answer is not a JSON object');
  if (answer.apiVersion !== sent.apiVersion || answer.kind !== 'AdmissionReview') {
    const [group, version] = sent.apiVersion.split('/');
    throw new InvalidResponse(
      `expected webhook response of ${group}/${version}, Kind=AdmissionReview, got ${String(answer.apiVersion ?? '')}, Kind=${String(answer.kind ?? '')}`,
    );
  }
  const response = answer.response;
  if (!isRecord(response)) throw new InvalidResponse('webhook response was absent');
  if (response.uid !== sent.request.uid) throw new InvalidResponse(`expected response.uid="${sent.request.uid}", got "${String(response.uid ?? '')}"`);
  const allowed = response.allowed === true;
  const warnings = Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === 'string') : [];
  const auditAnnotations: Record<string, string> = {};
  if (isRecord(response.auditAnnotations)) {
    for (const [key, value] of Object.entries(response.auditAnnotations)) if (typeof value === 'string') auditAnnotations[key] = value;
  }
  const status = isRecord(response.status) ? (response.status as ReviewStatus) : undefined;
  let patch: unknown;
  if (response.patch !== undefined && response.patch !== null && response.patch !== '') {
    if (!mutating) throw new InvalidResponse('validating webhook may not return a patch');
    if (response.patchType !== 'JSONPatch') throw new InvalidResponse(`expected patchType JSONPatch, got ${JSON.stringify(response.patchType ?? '')}`);
    if (typeof response.patch !== 'string') throw new InvalidResponse('response.patch must be base64 text');
    try {
      patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
    } catch {
      throw new InvalidResponse('response.patch is not base64 of a JSON patch');
    }
  } else if (response.patchType !== undefined && response.patchType !== null && response.patchType !== '' && !mutating) {
    throw new InvalidResponse('validating webhook may not return a patch');
  }
  return { allowed, status, patch, warnings, auditAnnotations };
}
