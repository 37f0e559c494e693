import { isApiError, RESOURCES, type Secret } from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { expirationOf, isBootstrapTokenSecret, TOKEN_DATA, TOKEN_NAMESPACE, tokenSecretData } from '@skiff/plugin-authn-bootstrap-token';
import { CLEANER_CONTROLLER_NAME } from './names.js';
import { MAX_TIMER_DELAY_MS } from './timer.js';

/**
 * kube-controller-manager's token cleaner: a bootstrap token Secret whose `expiration` has passed is deleted. Each
 * token is looked at when it appears or changes, and again when it is due to expire; an `expiration` that is not an
 * RFC 3339 time counts as passed.
 */
export class TokenCleaner {
  private readonly queue = new WorkQueue<string>({ name: CLEANER_CONTROLLER_NAME });
  private readonly secrets: Informer<Secret>;

  constructor(private readonly ctx: ControllerContext) {
    this.secrets = ctx.informers.informer<Secret>(RESOURCES.secrets, { namespace: TOKEN_NAMESPACE });
    const check = (secret: Secret) => {
      if (isBootstrapTokenSecret(secret)) this.queue.add(objectKey(secret));
    };
    this.secrets.addHandlers({ add: check, update: (_old, secret) => check(secret) });
  }

  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.secrets], queue: this.queue, workers, sync: (key) => this.sync(key) });
  }

  /** Deletes the token if it has expired, or comes back to it when it will have. */
  async sync(key: string): Promise<void> {
    const secret = this.secrets.get(key);
    if (!secret || !isBootstrapTokenSecret(secret) || secret.metadata.deletionTimestamp) return;
    const expiration = expirationOf(tokenSecretData(secret)[TOKEN_DATA.EXPIRATION]);
    if (expiration === undefined) return;
    const remaining = expiration - Date.now();
    if (remaining > 0) {
      this.queue.addAfter(key, Math.min(remaining, MAX_TIMER_DELAY_MS));
      return;
    }
    const { name, namespace, uid } = secret.metadata;
    try {
      // Only this Secret: one created again under the name meanwhile is judged on its own.
      await this.ctx.client.delete(RESOURCES.secrets, name!, namespace, { preconditions: { uid: uid! } });
    } catch (err) {
      if (isApiError(err, 'NotFound') || isApiError(err, 'Conflict')) return;
      throw err;
    }
    this.ctx.logger.info({ secret: key }, 'deleted expired bootstrap token');
  }
}
