import type { KubeObject, PersistentVolumeClaim, Pod } from '@skiff/api';
import { AUTHORIZE_STAGE, definePlugin, LIFECYCLE_STAGE, packageInfo, type Logger } from '@skiff/kernel';
import type { Store } from '@skiff/store';
import { authorizeNode, type Recheck } from './authorizer.js';
import { CLAIMS_PREFIX, NodeGraph, PODS_PREFIX } from './graph.js';
import { podReferences } from './references.js';

export const PLUGIN_NAME = '@skiff/plugin-authz-node';
/** Before ordinary authorizers (RBAC): a node's reads of Secrets, ConfigMaps, claims and volumes are decided here. */
export const NODE_AUTHORIZE_STAGE = AUTHORIZE_STAGE.DEFAULT - 100;
export { NodeGraph } from './graph.js';
export { authorizeNode, nodeNameOf, NODE_USER_PREFIX, NODES_GROUP } from './authorizer.js';
export { NODE_RULES, type NodeRule } from './rules.js';
export { podReferences, type PodReferences, type ReferencedKind } from './references.js';

/**
 * kube-apiserver's Node authorizer (`--authorization-mode=Node`): a kubelet (`system:node:<name>` in `system:nodes`)
 * may do what upstream's `system:node` role grants, and read a Secret, ConfigMap, PersistentVolumeClaim or
 * PersistentVolume, or request a ServiceAccount token, only when a pod bound to it uses that object. The graph of
 * pods, nodes and claims is kept in memory from the store, loaded before the API server serves.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['store'],
  apply(kernel) {
    const graph = new NodeGraph();
    let logger: Logger = kernel.logger;
    let store: Store | undefined;
    let abort: AbortController | undefined;

    async function load(prefix: string, keys: () => string[], apply: (key: string, object: KubeObject | undefined) => void): Promise<number> {
      const { items, revision } = await store!.list(prefix);
      const present = new Set(items.map((item) => item.key));
      for (const key of keys()) if (!present.has(key)) apply(key, undefined);
      for (const item of items) apply(item.key, item.object);
      return revision;
    }

    async function follow(
      prefix: string,
      revision: number,
      keys: () => string[],
      apply: (key: string, object: KubeObject | undefined) => void,
      signal: AbortSignal,
    ) {
      let seen = revision;
      while (!signal.aborted) {
        try {
          for await (const event of store!.watch(prefix, seen, signal)) {
            apply(event.key, event.type === 'DELETED' ? undefined : event.object);
            seen = event.revision;
          }
        } catch (err) {
          if (signal.aborted) return;
          logger.warn({ err, prefix }, 'node graph watch ended; listing again');
          seen = await load(prefix, keys, apply);
        }
      }
    }

    /** A miss may only mean the graph has not seen the latest write yet: ask the store itself, once. */
    const recheck: Recheck = async (node, kind, namespace, name) => {
      if (!store) return false;
      const podsUsing = async (ns: string, claimOrName: string, claimKind = kind) => {
        const { items } = await store!.list(`${PODS_PREFIX}${ns}/`);
        return items.some((item) => {
          const pod = item.object as Pod;
          return pod.spec?.nodeName === node && podReferences(pod)[claimKind === 'persistentvolumes' ? 'persistentvolumeclaims' : claimKind].has(claimOrName);
        });
      };
      if (kind !== 'persistentvolumes') return podsUsing(namespace, name);
      const { items } = await store.list(CLAIMS_PREFIX);
      for (const item of items) {
        const claim = item.object as PersistentVolumeClaim;
        if (claim.spec?.volumeName === name && (await podsUsing(claim.metadata.namespace ?? '', claim.metadata.name ?? '', 'persistentvolumeclaims')))
          return true;
      }
      return false;
    };

    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.API_SERVER - 1, {
      async start() {
        logger = kernel.logger.child({ component: PLUGIN_NAME });
        store = kernel.resolve('store');
        abort = new AbortController();
        const applyPod = (key: string, object: KubeObject | undefined) => graph.applyPod(key, object);
        const applyClaim = (key: string, object: KubeObject | undefined) => graph.applyClaim(key, object);
        const podsRevision = await load(PODS_PREFIX, () => graph.podKeys(), applyPod);
        const claimsRevision = await load(CLAIMS_PREFIX, () => graph.claimKeys(), applyClaim);
        void follow(PODS_PREFIX, podsRevision, () => graph.podKeys(), applyPod, abort.signal);
        void follow(CLAIMS_PREFIX, claimsRevision, () => graph.claimKeys(), applyClaim, abort.signal);
      },
      async stop() {
        abort?.abort();
      },
    });

    kernel.hooks.authorize.tapPromise({ name: PLUGIN_NAME, stage: NODE_AUTHORIZE_STAGE }, async (attributes) => authorizeNode(attributes, graph, recheck));
  },
});
