import type { SubjectAccessReviewSpec, SubjectAccessReviewStatus } from '@skiff/api';
import type { AuthzAttributes, AuthzDecision, Logger } from '@skiff/kernel';
import { DecisionCache } from './decision-cache.js';
import { decisionOf, reviewSpec } from './review.js';

export interface WebhookAuthorizerOptions {
  /** What a webhook that fails (unreachable, too slow, a wrong answer) means. */
  failurePolicy: 'NoOpinion' | 'Deny';
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
  cacheSize: number;
  logger?: Logger;
  now?: () => number;
}

/** Who answers reviews: the HTTPS client, or anything else in tests. */
export type Reviewer = (spec: SubjectAccessReviewSpec) => Promise<SubjectAccessReviewStatus>;

/** When a failing webhook's failure is logged again: once per this long, with the count in between. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

/**
 * Asks the webhook about each request not decided in the cache: allowed answers are kept for `authorizedTTLMs`,
 * denied and no-opinion ones for `unauthorizedTTLMs`, failures not at all.
 */
export class WebhookAuthorizer {
  private readonly cache: DecisionCache<AuthzDecision>;
  private failuresSinceLog = 0;
  private lastFailureLog = -Infinity;
  private readonly now: () => number;

  constructor(
    private readonly review: Reviewer,
    private readonly options: WebhookAuthorizerOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.cache = new DecisionCache(options.cacheSize, this.now);
  }

  async authorize(attributes: AuthzAttributes): Promise<AuthzDecision> {
    const spec = reviewSpec(attributes);
    try {
      return await this.cache.get(
        JSON.stringify(spec),
        async () => decisionOf(await this.review(spec)),
        (decision) => (decision?.decision === 'allow' ? this.options.authorizedTTLMs : this.options.unauthorizedTTLMs),
      );
    } catch (err) {
      this.logFailure(err as Error);
      if (this.options.failurePolicy === 'Deny') return { decision: 'deny', reason: 'the authorization webhook failed (failurePolicy Deny)' };
      return undefined;
    }
  }

  private logFailure(err: Error): void {
    this.failuresSinceLog++;
    const now = this.now();
    if (now - this.lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    this.options.logger?.warn({ err: err.message, failures: this.failuresSinceLog, failurePolicy: this.options.failurePolicy }, 'authorization webhook failed');
    this.failuresSinceLog = 0;
    this.lastFailureLog = now;
  }
}
