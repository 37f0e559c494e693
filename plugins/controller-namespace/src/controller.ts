import { isApiError, RESOURCES, type Namespace } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { kubeTime, runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer, ResourceRegistry } from '@skiff/kernel';
import { deletionConditions, mergeConditions } from './conditions.js';
import { deleteContent, isEmpty, type ContentReport } from './content.js';
import { NamespaceError } from './errors.js';
import { CONTROLLER_NAME, NAMESPACE_FINALIZER } from './names.js';
import { contentResources } from './resources.js';

/**
 * While objects are still going (pods finishing a graceful deletion, objects held by finalizers) a
 * namespace is checked again after a delay that starts short and doubles up to a second, so a quick
 * deletion finishes quickly and a slow one costs little.
 */
const RECHECK_FIRST_MS = 100;
const RECHECK_MAX_MS = 1_000;

/**
 * The namespace controller of kube-controller-manager: a namespace being deleted is emptied of every
 * namespaced kind the API server serves, and once nothing is left its `kubernetes` finalizer is removed
 * through the `finalize` subresource, which lets the API server remove it.
 */
export class NamespaceController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly namespaces: Informer<Namespace>;
  /** How often each terminating namespace has been found not yet empty, for the re-check delay. */
  private readonly rechecks = new Map<string, number>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly registry: ResourceRegistry,
    private readonly now: () => number = Date.now,
  ) {
    this.namespaces = ctx.informers.informer<Namespace>(RESOURCES.namespaces);
    this.namespaces.addHandlers({
      add: (namespace) => this.enqueueIfTerminating(namespace),
      update: (_old, namespace) => this.enqueueIfTerminating(namespace),
      delete: (namespace) => this.rechecks.delete(namespace.metadata.name!),
    });
  }

  /** Waits for the namespace cache, then works the queue until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.namespaces], queue: this.queue, workers, sync: (name) => this.sync(name) });
  }

  /** One pass over a terminating namespace: delete what is in it, report what is left, finalize it once empty. */
  async sync(name: string): Promise<void> {
    // The cache may lag behind a finalize that already happened; the live object decides.
    const namespace = this.namespaces.get(name)?.metadata.deletionTimestamp ? await this.live(name) : undefined;
    if (!namespace?.metadata.deletionTimestamp || !namespace.spec?.finalizers?.includes(NAMESPACE_FINALIZER)) {
      this.rechecks.delete(name);
      return;
    }
    const report = await deleteContent(this.ctx.client, name, contentResources(this.registry));
    const reported = await this.reportConditions(namespace, report);
    if (report.failures.length > 0) {
      throw new NamespaceError('SKIFF_ERR_NAMESPACE_CONTENT_DELETION', { namespace: name, detail: report.failures.join('; ') });
    }
    if (!isEmpty(report)) {
      this.queue.addAfter(name, this.recheckDelay(name));
      return;
    }
    this.rechecks.delete(name);
    await this.finalize(reported);
  }

  private enqueueIfTerminating(namespace: Namespace): void {
    if (namespace.metadata.deletionTimestamp) this.queue.add(namespace.metadata.name!);
  }

  private async live(name: string): Promise<Namespace | undefined> {
    try {
      return await this.ctx.client.get<Namespace>(RESOURCES.namespaces, name);
    } catch (err) {
      if (isApiError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  /** Writes the deletion conditions when they changed; answers the namespace as it now is. */
  private async reportConditions(namespace: Namespace, report: ContentReport): Promise<Namespace> {
    const { conditions, changed } = mergeConditions(namespace.status?.conditions ?? [], deletionConditions(report, kubeTime(this.now())));
    if (!changed) return namespace;
    return this.ctx.client.updateStatus<Namespace>(RESOURCES.namespaces, { ...{}, ...namespace, status: { ...{}, ...namespace.status, conditions } });
  }

  /** Removes our finalizer; other finalizers in spec.finalizers (other controllers') stay and keep the namespace. */
  private async finalize(namespace: Namespace): Promise<void> {
    const finalizers = (namespace.spec?.finalizers ?? []).filter((finalizer) => finalizer !== NAMESPACE_FINALIZER);
    this.ctx.logger.info({ namespace: namespace.metadata.name }, 'namespace is empty; finalizing it');
    await this.ctx.client.update<Namespace>(
      RESOURCES.namespaces,
      { ...{}, ...namespace, spec: { ...{}, ...namespace.spec, finalizers } },
      { subresource: 'finalize' },
    );
  }

  private recheckDelay(name: string): number {
    const count = this.rechecks.get(name) ?? 0;
    this.rechecks.set(name, count + 1);
    return Math.min(RECHECK_FIRST_MS * 2 ** count, RECHECK_MAX_MS);
  }
}
