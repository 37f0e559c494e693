import type { UserInfo } from '@skiff/api';
import { definePlugin, packageInfo, type AdmissionRequest } from '@skiff/kernel';
import { NodeRestrictionError } from './errors.js';
import { NODE_RESTRICTION_STAGE, NODE_USER_PREFIX, NODES_GROUP, PLUGIN_NAME } from './names.js';
import { admitClaim, admitCSINode, admitLease, admitNode, admitPod, admitServiceAccount, type NodeRequest } from './restrictions.js';

export { PLUGIN_NAME, NODE_RESTRICTION_STAGE, NODE_RESTRICTION_LABEL_PREFIX } from './names.js';
export { NODE_RESTRICTION_ERRORS, NodeRestrictionError, type NodeRestrictionErrorCode } from './errors.js';
export { forbiddenForNodes } from './labels.js';

/** The node a user is (`system:node:<name>` in `system:nodes`): its name, '' when the name is missing, undefined for anyone else. */
export function nodeOf(user: UserInfo): string | undefined {
  if (!user.username.startsWith(NODE_USER_PREFIX) || !user.groups?.includes(NODES_GROUP)) return undefined;
  return user.username.slice(NODE_USER_PREFIX.length);
}

type Check = (request: NodeRequest) => void | Promise<void>;

/** What a node's writes are checked by, per `<group>/<resource>`; other writes pass. */
const CHECKS: ReadonlyMap<string, Check> = new Map<string, Check>([
  ['/nodes', admitNode],
  ['/pods', admitPod],
  ['/persistentvolumeclaims', admitClaim],
  ['/serviceaccounts', admitServiceAccount],
  ['coordination.k8s.io/leases', admitLease],
  ['storage.k8s.io/csinodes', admitCSINode],
]);

/**
 * kube-apiserver's NodeRestriction admission: a kubelet (`system:node:<name>`, group `system:nodes`) may change
 * only its own Node (never its taints, nor labels under `node-restriction.kubernetes.io/` or other reserved
 * kubernetes.io labels), the status of pods bound to it, mirror pods of its own, its own Lease and CSINode, and may
 * request ServiceAccount tokens only bound to its own pods. The Node authorizer says what a node may do at all;
 * this plugin narrows its writes to itself.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: NODE_RESTRICTION_STAGE }, async (request: AdmissionRequest) => {
      // As upstream's NodeRestriction: writes only; exec, attach, port-forward and proxy (CONNECT) pass.
      if (request.operation === 'CONNECT') return;
      const node = nodeOf(request.user);
      if (node === undefined) return;
      if (!node) throw new NodeRestrictionError(request, 'SKIFF_ERR_NODE_RESTRICTION_UNKNOWN_NODE', { user: request.user.username });
      await CHECKS.get(`${request.resource.group}/${request.resource.resource}`)?.({ request, node });
    });
  },
});
