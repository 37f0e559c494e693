import { errorMessage, isApiError, RESOURCES, type ClusterRoleBinding, type KubeObject, type ResourceType, type Role, type RoleBinding } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { BootstrapSignerError } from './errors.js';
import { CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE, RBAC } from './names.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RBAC_API_VERSION = `${RBAC_GROUP}/v1`;

function clusterRoleBinding(name: string, group: string, clusterRole: string): ClusterRoleBinding {
  return {
    apiVersion: RBAC_API_VERSION,
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: clusterRole },
    subjects: [{ apiGroup: RBAC_GROUP, kind: 'Group', name: group }],
  };
}

/**
 * What kubeadm sets up so that a node can join with a bootstrap token: `joinGroup` (the group its tokens carry)
 * may ask for a node client certificate, and such requests — and those of nodes renewing their own — are approved
 * automatically; anyone, anonymous users included, may read cluster-info.
 */
export function joinRbacObjects(joinGroup: string): { type: ResourceType; object: KubeObject }[] {
  const role: Role = {
    apiVersion: RBAC_API_VERSION,
    kind: 'Role',
    metadata: { name: RBAC.CLUSTER_INFO_READER, namespace: CLUSTER_INFO_NAMESPACE },
    rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [CLUSTER_INFO_NAME], verbs: ['get'] }],
  };
  const roleBinding: RoleBinding = {
    apiVersion: RBAC_API_VERSION,
    kind: 'RoleBinding',
    metadata: { name: RBAC.CLUSTER_INFO_READER, namespace: CLUSTER_INFO_NAMESPACE },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: RBAC.CLUSTER_INFO_READER },
    subjects: [{ apiGroup: RBAC_GROUP, kind: 'User', name: 'system:anonymous' }],
  };
  return [
    { type: RESOURCES.clusterrolebindings, object: clusterRoleBinding(RBAC.KUBELET_BOOTSTRAP, joinGroup, 'system:node-bootstrapper') },
    {
      type: RESOURCES.clusterrolebindings,
      object: clusterRoleBinding(RBAC.NODE_AUTOAPPROVE_BOOTSTRAP, joinGroup, 'system:certificates.k8s.io:certificatesigningrequests:nodeclient'),
    },
    {
      type: RESOURCES.clusterrolebindings,
      object: clusterRoleBinding(RBAC.NODE_AUTOAPPROVE_ROTATION, 'system:nodes', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient'),
    },
    { type: RESOURCES.roles, object: role },
    { type: RESOURCES.rolebindings, object: roleBinding },
  ];
}

/**
 * Creates the objects of `joinRbacObjects` that do not exist yet; existing ones are left as they are (someone may
 * have narrowed them on purpose). Answers the names of the objects it created.
 */
export async function ensureJoinRbac(client: ApiClient, joinGroup: string): Promise<string[]> {
  const created: string[] = [];
  for (const { type, object } of joinRbacObjects(joinGroup)) {
    const { name, namespace } = object.metadata;
    const qualified = namespace ? `${namespace}/${name}` : name!;
    try {
      await client.create(type, object, namespace);
      created.push(`${type.kind} ${qualified}`);
    } catch (err) {
      if (isApiError(err, 'AlreadyExists')) continue;
      throw new BootstrapSignerError('SKIFF_ERR_BOOTSTRAP_SIGNER_RBAC', { kind: type.kind, name: qualified, detail: errorMessage(err) }, { cause: err });
    }
  }
  return created;
}
