// The webhooks in force, from watches of the Mutating- and ValidatingWebhookConfigurations through an
// in-process client: a change is seen within the watch's delay (milliseconds). Each webhook is compiled once
// per configuration version; its connection pool is kept while its clientConfig stays the same.
import {
  RESOURCES,
  type KubeObject,
  type MutatingWebhook,
  type MutatingWebhookConfiguration,
  type ValidatingWebhook,
  type ValidatingWebhookConfiguration,
} from '@skiff/api';
import { SharedInformer } from '@skiff/client';
import type { ApiClient, Logger } from '@skiff/kernel';
import { WebhookCaller } from './caller.js';
import { compileConditions, type CompiledConditions } from './match-conditions.js';
import { compileMatcher, type WebhookMatcher } from './matching.js';
import { DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS } from './names.js';
import { reviewVersionFor, type ReviewVersion } from './review.js';
import type { ServiceResolver } from './service-resolver.js';

const RETRY = { initialMs: 100, maxMs: 5_000 };

/** One webhook of one configuration, ready to be matched and called. */
export interface Webhook {
  /** `<configuration>/<webhook>/<index>`: unique even when two configurations use the same webhook name. */
  uid: string;
  configuration: string;
  name: string;
  /** Position in the sorted list of its kind (for the audit annotations' `index_<i>`). */
  index: number;
  /** The matcher, or why the webhook's selectors cannot be used (then each call fails). */
  matcher: WebhookMatcher | Error;
  conditions: CompiledConditions;
  caller: WebhookCaller | Error;
  reviewVersion?: ReviewVersion;
  timeoutSeconds: number;
  /** failurePolicy Fail (the default): a failed call refuses the request. */
  failClosed: boolean;
  /** sideEffects None or NoneOnDryRun: may be called for dry-run requests. */
  dryRunSafe: boolean;
  /** reinvocationPolicy IfNeeded (mutating webhooks only). */
  reinvokeIfNeeded: boolean;
}

type AnyWebhook = MutatingWebhook | ValidatingWebhook;

const byName = (a: KubeObject, b: KubeObject) =>
  (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : (a.metadata.name ?? '') > (b.metadata.name ?? '') ? 1 : 0;

function attempt<T>(build: () => T): T | Error {
  try {
    return build();
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** The webhooks of one kind of configuration, kept current by a watch. */
class WebhookSource<C extends MutatingWebhookConfiguration | ValidatingWebhookConfiguration> {
  readonly informer: SharedInformer<C>;
  private current: Webhook[] | undefined;
  /** Callers by webhook uid, with the clientConfig they were made for. */
  private callers = new Map<string, { config: string; caller: WebhookCaller | Error }>();

  constructor(
    client: ApiClient,
    type: (typeof RESOURCES)['mutatingwebhookconfigurations' | 'validatingwebhookconfigurations'],
    logger: Logger,
    private readonly resolver: ServiceResolver,
    private readonly mutating: boolean,
  ) {
    this.informer = new SharedInformer<C>(client, type, {}, { resyncMs: 0, logger, retry: RETRY });
    const changed = () => (this.current = undefined);
    this.informer.addHandlers({ add: changed, update: changed, delete: changed });
  }

  webhooks(): readonly Webhook[] {
    this.current ??= this.build();
    return this.current;
  }

  private build(): Webhook[] {
    const webhooks: Webhook[] = [];
    const callers = new Map<string, { config: string; caller: WebhookCaller | Error }>();
    for (const configuration of this.informer.list().sort(byName)) {
      const configName = configuration.metadata.name ?? '';
      (configuration.webhooks ?? []).forEach((webhook: AnyWebhook, i) => {
        const uid = `${configName}/${webhook.name}/${i}`;
        const clientConfig = JSON.stringify(webhook.clientConfig ?? {});
        const kept = this.callers.get(uid);
        const caller = kept && kept.config === clientConfig ? kept.caller : attempt(() => new WebhookCaller(webhook.clientConfig ?? {}, this.resolver));
        callers.set(uid, { config: clientConfig, caller });
        const timeout = webhook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
        webhooks.push({
          uid,
          configuration: configName,
          name: webhook.name,
          index: webhooks.length,
          matcher: attempt(() => compileMatcher(webhook)),
          conditions: compileConditions(webhook.matchConditions),
          caller,
          reviewVersion: reviewVersionFor(webhook.admissionReviewVersions),
          timeoutSeconds: Math.min(Math.max(timeout, 1), MAX_TIMEOUT_SECONDS),
          failClosed: webhook.failurePolicy !== 'Ignore',
          dryRunSafe: webhook.sideEffects === 'None' || webhook.sideEffects === 'NoneOnDryRun',
          reinvokeIfNeeded: this.mutating && (webhook as MutatingWebhook).reinvocationPolicy === 'IfNeeded',
        });
      });
    }
    for (const [uid, { caller }] of this.callers) if (callers.get(uid)?.caller !== caller && !(caller instanceof Error)) caller.close();
    this.callers = callers;
    return webhooks;
  }

  close(): void {
    for (const { caller } of this.callers.values()) if (!(caller instanceof Error)) caller.close();
    this.callers.clear();
  }
}

/** The mutating and the validating webhooks in force. */
export class WebhookConfigurations {
  readonly mutating: WebhookSource<MutatingWebhookConfiguration>;
  readonly validating: WebhookSource<ValidatingWebhookConfiguration>;

  constructor(client: ApiClient, logger: Logger, resolver: ServiceResolver) {
    this.mutating = new WebhookSource(client, RESOURCES.mutatingwebhookconfigurations, logger, resolver, true);
    this.validating = new WebhookSource(client, RESOURCES.validatingwebhookconfigurations, logger, resolver, false);
  }

  /** Lists both kinds before resolving; follows their changes until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    void this.mutating.informer.run(signal);
    void this.validating.informer.run(signal);
    await Promise.all([this.mutating.informer.waitForSync(signal), this.validating.informer.waitForSync(signal)]);
  }

  close(): void {
    this.mutating.close();
    this.validating.close();
  }
}
