import { isApiError, RESOURCES, type ConfigMap, type Secret } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { hasExpired, isBootstrapTokenSecret, readBootstrapToken, TOKEN_NAMESPACE } from '@skiff/plugin-authn-bootstrap-token';
import { signClusterInfo } from './jws.js';
import { CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE, KUBECONFIG_KEY, SIGNATURE_KEY_PREFIX, SIGNER_CONTROLLER_NAME } from './names.js';
import { MAX_TIMER_DELAY_MS } from './timer.js';

/** The one item of the signer's queue: every change leads to the same work, bringing cluster-info up to date. */
const CLUSTER_INFO_KEY = `${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_NAME}`;

function sameData(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/**
 * kube-controller-manager's bootstrap signer, with kubeadm's part of creating cluster-info: the ConfigMap
 * `cluster-info` in kube-public holds the cluster's kubeconfig (its address and CA) and, for every unexpired token
 * allowed to sign, `jws-kubeconfig-<id>` — a signature of that kubeconfig keyed with the token. A joining node that
 * holds a token reads the ConfigMap anonymously and trusts the CA only if the signature checks out.
 */
export class BootstrapSigner {
  private readonly queue = new WorkQueue<string>({ name: SIGNER_CONTROLLER_NAME });
  private readonly configMaps: Informer<ConfigMap>;
  private readonly secrets: Informer<Secret>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly kubeconfig: string,
  ) {
    this.configMaps = ctx.informers.informer<ConfigMap>(RESOURCES.configmaps, {
      namespace: CLUSTER_INFO_NAMESPACE,
      fieldSelector: `metadata.name=${CLUSTER_INFO_NAME}`,
    });
    this.secrets = ctx.informers.informer<Secret>(RESOURCES.secrets, { namespace: TOKEN_NAMESPACE });
    const resign = () => this.queue.add(CLUSTER_INFO_KEY);
    this.configMaps.addHandlers({ add: resign, update: resign, delete: resign });
    const resignFor = (...secrets: Secret[]) => {
      if (secrets.some(isBootstrapTokenSecret)) resign();
    };
    this.secrets.addHandlers({ add: resignFor, update: resignFor, delete: resignFor });
  }

  /** Waits for both caches, then keeps cluster-info current until the context's signal aborts. One worker: there is one ConfigMap. */
  run(): Promise<void> {
    return runWhenSynced(this.ctx, {
      informers: [this.configMaps, this.secrets],
      queue: this.queue,
      workers: 1,
      sync: () => this.sync(),
      beforeWorkers: () => this.queue.add(CLUSTER_INFO_KEY),
    });
  }

  /** The signatures cluster-info should carry now, by key; schedules the next pass for when the first of them expires. */
  private signatures(): Record<string, string> {
    const now = Date.now();
    const signatures: Record<string, string> = {};
    let nextExpiry = Infinity;
    for (const secret of this.secrets.list()) {
      const token = readBootstrapToken(secret);
      if (!token || !token.usages.includes('signing') || hasExpired(token, now)) continue;
      signatures[`${SIGNATURE_KEY_PREFIX}${token.id}`] = signClusterInfo(this.kubeconfig, token.id, token.secret);
      if (token.expiration !== undefined) nextExpiry = Math.min(nextExpiry, token.expiration);
    }
    if (nextExpiry !== Infinity) this.queue.addAfter(CLUSTER_INFO_KEY, Math.min(nextExpiry - now, MAX_TIMER_DELAY_MS));
    return signatures;
  }

  /** Creates cluster-info, or brings its kubeconfig and signatures to what they should be (other keys are kept). */
  async sync(): Promise<void> {
    const signatures = this.signatures();
    const current = this.configMaps.get(CLUSTER_INFO_KEY);
    if (!current) {
      try {
        await this.ctx.client.create<ConfigMap>(
          RESOURCES.configmaps,
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: CLUSTER_INFO_NAME, namespace: CLUSTER_INFO_NAMESPACE },
            data: { [KUBECONFIG_KEY]: this.kubeconfig, ...signatures },
          },
          CLUSTER_INFO_NAMESPACE,
        );
        this.ctx.logger.info({ signatures: Object.keys(signatures).length }, 'cluster-info created');
      } catch (err) {
        // The cache had not seen it yet: its add event queues the next pass.
        if (!isApiError(err, 'AlreadyExists')) throw err;
      }
      return;
    }
    const kept = Object.entries(current.data ?? {}).filter(([key]) => key !== KUBECONFIG_KEY && !key.startsWith(SIGNATURE_KEY_PREFIX));
    const data = { ...{}, ...Object.fromEntries(kept), [KUBECONFIG_KEY]: this.kubeconfig, ...signatures };
    if (sameData(current.data ?? {}, data)) return;
    // Conditional on the version read: a 409 means someone wrote it since, and the retry reads again.
    await this.ctx.client.update<ConfigMap>(RESOURCES.configmaps, { ...{}, ...current, data });
    this.ctx.logger.debug({ signatures: Object.keys(signatures).length }, 'cluster-info signed');
  }
}
