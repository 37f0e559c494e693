// Calls the webhooks a request matches: the mutating ones one after the other (each sees the changes of
// those before it, and IfNeeded ones are called once more when a later webhook changed the object), the
// validating ones all at once. A failed call refuses the request or is passed over, by failurePolicy.
import { errorMessage, errors, qualifiedResource, type KubeObject } from '@skiff/api';
import { applyJsonPatch } from '@skiff/api/patch';
import type { AdmissionRequest, Logger } from '@skiff/kernel';
import { CallFailure } from './caller.js';
import type { Webhook } from './configurations.js';
import { callingFailed, dryRunUnsupported, WebhookDenied } from './errors.js';
import { matchWebhook, type MatchAttributes, type MatchContext } from './matching.js';
import { FAILED_OPEN_MUTATING_PREFIX, FAILED_OPEN_VALIDATING_PREFIX, MUTATION_ANNOTATION_PREFIX } from './names.js';
import { evaluateConditions } from './match-conditions.js';
import { buildReview, InvalidResponse, inVersion, readResponse, type AdmissionReviewRequest, type Invocation, type ReviewResponse } from './review.js';

export interface DispatchContext extends MatchContext {
  logger: Logger;
}

/** A call about to be made: the request as the webhook matched it, and the review it will receive. */
interface Call {
  invocation: Invocation;
  /** Undefined when the webhook speaks no AdmissionReview version we send (the call then fails). */
  review?: AdmissionReviewRequest;
}

/**
 * Whether the webhook is called for the request, and as what: its rules and selectors, then its
 * matchConditions. A webhook whose selectors cannot be read fails (its failurePolicy decides); a condition that
 * cannot be evaluated refuses the request (403) under failurePolicy Fail and skips the webhook under Ignore.
 */
async function callFor(webhook: Webhook, request: AdmissionRequest, context: DispatchContext): Promise<Call | undefined | Error> {
  if (webhook.matcher instanceof Error) return webhook.matcher;
  const match = await matchWebhook(webhook.matcher, request as MatchAttributes, context);
  if (!match.matches) return undefined;
  const invocation = { resource: match.resource, kind: match.kind };
  const review = webhook.reviewVersion ? buildReview(request, invocation, webhook.reviewVersion) : undefined;
  if (webhook.conditions.length > 0) {
    const fields = (review ?? buildReview(request, invocation, 'v1')).request;
    const result = evaluateConditions(webhook.conditions, { object: fields.object, oldObject: fields.oldObject, request: fields });
    if (!result.matches) {
      if (result.error === undefined || !webhook.failClosed) return undefined;
      throw errors.forbidden(`${qualifiedResource(request.resource.resource, request.resource.group)} "${request.name}" is forbidden: ${result.error}`);
    }
  }
  return { invocation, review };
}

/** One call: the webhook's checked answer, or why there is none (a CallFailure or an InvalidResponse). */
async function call(webhook: Webhook, review: AdmissionReviewRequest | undefined, mutating: boolean): Promise<ReviewResponse> {
  if (webhook.caller instanceof Error) throw new CallFailure(webhook.caller.message);
  if (!review) throw new CallFailure('webhook does not accept v1 or v1beta1 AdmissionReview');
  const answer = await webhook.caller.post(JSON.stringify(review), webhook.timeoutSeconds);
  return readResponse(review, answer, mutating);
}

/** Why a call failed, as kube-apiserver words it after `failed calling webhook "<name>": `. */
function failureText(err: unknown): string | undefined {
  if (err instanceof CallFailure) return `failed to call webhook: ${err.message}`;
  if (err instanceof InvalidResponse) return `received invalid webhook response: ${err.message}`;
  return undefined;
}

/**
 * Asks one matched webhook. Returns its answer when it allowed the request, or undefined when the call failed
 * and its failurePolicy is Ignore (the failure is logged and recorded in the audit annotations).
 */
async function ask(
  webhook: Webhook,
  request: AdmissionRequest,
  planned: Call | Error,
  mutating: boolean,
  round: number,
  context: DispatchContext,
): Promise<ReviewResponse | undefined> {
  if (request.dryRun && !webhook.dryRunSafe) throw dryRunUnsupported(webhook.name);
  let response: ReviewResponse;
  try {
    if (planned instanceof Error) throw new CallFailure(planned.message);
    response = await call(webhook, planned.review, mutating);
  } catch (err) {
    const why = failureText(err);
    if (why === undefined) throw err;
    if (webhook.failClosed) throw callingFailed(webhook.name, why);
    context.logger.warn({ webhook: webhook.name, configuration: webhook.configuration, err: why }, 'failed calling webhook, failing open');
    const prefix = mutating ? FAILED_OPEN_MUTATING_PREFIX : FAILED_OPEN_VALIDATING_PREFIX;
    if (request.auditAnnotations) request.auditAnnotations[`${prefix}round_${round}_index_${webhook.index}`] = webhook.name;
    return undefined;
  }
  for (const warning of response.warnings) request.warnings?.push(warning);
  if (request.auditAnnotations) {
    for (const [key, value] of Object.entries(response.auditAnnotations)) request.auditAnnotations[`${webhook.name}/${key}`] = value;
  }
  if (!response.allowed) throw new WebhookDenied(webhook.name, response.status);
  return response;
}

/** The object after a webhook's JSON patch, back in the request's own version; undefined if nothing changed. */
function patched(webhook: Webhook, object: KubeObject, invocation: Invocation, patch: unknown): KubeObject | undefined {
  const seen = inVersion(object, invocation.kind);
  let result: KubeObject;
  try {
    result = applyJsonPatch(seen, patch);
  } catch (err) {
    throw errors.internal(`the patch of admission webhook "${webhook.name}" cannot be applied: ${errorMessage(err)}`);
  }
  result = { ...{}, ...result, apiVersion: object.apiVersion, kind: object.kind };
  return JSON.stringify(result) === JSON.stringify(object) ? undefined : result;
}

/** Runs the mutating webhooks in order; IfNeeded ones once more when a later webhook changed the object. */
export async function runMutating(webhooks: readonly Webhook[], request: AdmissionRequest, context: DispatchContext): Promise<void> {
  // Invoked IfNeeded webhooks that have not seen a change made after their call yet.
  const invokedSinceChange = new Set<Webhook>();
  const reinvoke = new Set<Webhook>();
  for (const round of [0, 1]) {
    if (round === 1 && reinvoke.size === 0) return;
    for (const webhook of webhooks) {
      if (round === 1 && !reinvoke.has(webhook)) continue;
      const planned = await callFor(webhook, request, context);
      if (planned === undefined) continue;
      const response = await ask(webhook, request, planned, true, round, context);
      let mutated = false;
      if (response?.patch !== undefined && request.object && !(planned instanceof Error)) {
        const next = patched(webhook, request.object, planned.invocation, response.patch);
        if (next) {
          request.object = next;
          mutated = true;
        }
      }
      if (response && request.auditAnnotations) {
        request.auditAnnotations[`${MUTATION_ANNOTATION_PREFIX}round_${round}_index_${webhook.index}`] = JSON.stringify({
          configuration: webhook.configuration,
          webhook: webhook.name,
          mutated,
        });
      }
      if (round > 0) continue;
      if (mutated) {
        for (const earlier of invokedSinceChange) reinvoke.add(earlier);
        invokedSinceChange.clear();
      }
      if (webhook.reinvokeIfNeeded) invokedSinceChange.add(webhook);
    }
  }
}

/** Runs the validating webhooks in parallel; the first refusal in webhook order is the answer. */
export async function runValidating(webhooks: readonly Webhook[], request: AdmissionRequest, context: DispatchContext): Promise<void> {
  const outcomes = await Promise.all(
    webhooks.map(async (webhook) => {
      try {
        const planned = await callFor(webhook, request, context);
        if (planned !== undefined) await ask(webhook, request, planned, false, 0, context);
        return undefined;
      } catch (err) {
        return err;
      }
    }),
  );
  const refusal = outcomes.find((outcome) => outcome !== undefined);
  if (refusal !== undefined) throw refusal;
}
