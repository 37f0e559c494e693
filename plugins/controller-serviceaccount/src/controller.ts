import { isApiError, RESOURCES, type Namespace, type ServiceAccount } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { enqueueActiveNamespaces, isNamespaceActive, isNamespaceActiveLive, runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { CONTROLLER_NAME } from './names.js';

/**
 * kube-controller-manager's ServiceAccounts controller: every active namespace holds the named
 * ServiceAccounts (`default`), created when the namespace appears and again whenever one is deleted.
 * Only the account itself is created — no token Secret, as since Kubernetes 1.24.
 */
export class ServiceAccountsController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly namespaces: Informer<Namespace>;
  private readonly serviceAccounts: Informer<ServiceAccount>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly names: readonly string[],
  ) {
    this.namespaces = ctx.informers.informer<Namespace>(RESOURCES.namespaces);
    this.serviceAccounts = ctx.informers.informer<ServiceAccount>(RESOURCES.serviceaccounts);
    enqueueActiveNamespaces(this.namespaces, this.queue);
    this.serviceAccounts.addHandlers({
      delete: (account) => {
        if (account.metadata.namespace && this.names.includes(account.metadata.name!)) this.queue.add(account.metadata.namespace);
      },
    });
  }

  /** Waits for both caches, then works the queue until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, {
      informers: [this.namespaces, this.serviceAccounts],
      queue: this.queue,
      workers,
      sync: (namespace) => this.sync(namespace),
    });
  }

  /** Creates the accounts missing from one namespace. */
  async sync(namespace: string): Promise<void> {
    if (!isNamespaceActive(this.namespaces.get(namespace))) return;
    for (const name of this.names) {
      if (this.serviceAccounts.get(`${namespace}/${name}`)) continue;
      try {
        await this.ctx.client.create<ServiceAccount>(
          RESOURCES.serviceaccounts,
          { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
          namespace,
        );
        this.ctx.logger.debug({ namespace, serviceAccount: name }, 'service account created');
      } catch (err) {
        // The cache lagged behind a create, or the namespace went away meanwhile: nothing to do either way.
        if (isApiError(err, 'AlreadyExists')) continue;
        if ((isApiError(err, 'Forbidden') || isApiError(err, 'NotFound')) && !(await isNamespaceActiveLive(this.ctx.client, namespace))) return;
        throw err;
      }
    }
  }
}
