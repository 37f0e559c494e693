import { isApiError, RESOURCES, type ConfigMap, type Namespace } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { enqueueActiveNamespaces, isNamespaceActive, isNamespaceActiveLive, runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { CONTROLLER_NAME, ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from './names.js';

/** Whether a ConfigMap's data is exactly the published certificate (any other key is removed, as upstream does). */
export function holdsCertificate(configMap: ConfigMap, pem: string): boolean {
  const data = configMap.data ?? {};
  const keys = Object.keys(data);
  return keys.length === 1 && data[ROOT_CA_KEY] === pem;
}

/**
 * kube-controller-manager's root CA publisher: every active namespace holds the ConfigMap
 * `kube-root-ca.crt` whose `ca.crt` is the cluster CA, so workloads can verify the API server. The
 * ConfigMap is created with the namespace, and put back when it is changed or deleted.
 */
export class RootCaPublisher {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly namespaces: Informer<Namespace>;
  private readonly configMaps: Informer<ConfigMap>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly pem: string,
  ) {
    this.namespaces = ctx.informers.informer<Namespace>(RESOURCES.namespaces);
    // Only the published ConfigMaps: the others in the cluster may be many and large.
    this.configMaps = ctx.informers.informer<ConfigMap>(RESOURCES.configmaps, { fieldSelector: `metadata.name=${ROOT_CA_CONFIGMAP}` });
    enqueueActiveNamespaces(this.namespaces, this.queue);
    this.configMaps.addHandlers({
      update: (_old, configMap) => {
        if (!holdsCertificate(configMap, this.pem)) this.queue.add(configMap.metadata.namespace!);
      },
      delete: (configMap) => this.queue.add(configMap.metadata.namespace!),
    });
  }

  /** Waits for both caches, then works the queue until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.namespaces, this.configMaps], queue: this.queue, workers, sync: (namespace) => this.sync(namespace) });
  }

  /** Brings one namespace's ConfigMap to the certificate: creates it, or rewrites its data. */
  async sync(namespace: string): Promise<void> {
    if (!isNamespaceActive(this.namespaces.get(namespace))) return;
    const cached = this.configMaps.get(`${namespace}/${ROOT_CA_CONFIGMAP}`);
    if (cached) {
      if (!holdsCertificate(cached, this.pem)) await this.rewrite(cached);
      return;
    }
    try {
      await this.ctx.client.create<ConfigMap>(
        RESOURCES.configmaps,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, namespace }, data: { [ROOT_CA_KEY]: this.pem } },
        namespace,
      );
    } catch (err) {
      // The cache lagged behind a create: the live object decides.
      if (isApiError(err, 'AlreadyExists')) {
        const live = await this.ctx.client.get<ConfigMap>(RESOURCES.configmaps, ROOT_CA_CONFIGMAP, namespace);
        if (!holdsCertificate(live, this.pem)) await this.rewrite(live);
        return;
      }
      // The namespace went away or began terminating meanwhile.
      if ((isApiError(err, 'Forbidden') || isApiError(err, 'NotFound')) && !(await isNamespaceActiveLive(this.ctx.client, namespace))) return;
      throw err;
    }
  }

  /** An update conditional on the version read: a 409 means someone wrote it since, and the next pass reads again. */
  private async rewrite(configMap: ConfigMap): Promise<void> {
    await this.ctx.client.update<ConfigMap>(RESOURCES.configmaps, { ...{}, ...configMap, data: { [ROOT_CA_KEY]: this.pem } });
    this.ctx.logger.debug({ namespace: configMap.metadata.namespace }, 'root CA ConfigMap restored');
  }
}
