import { isDeepStrictEqual } from 'node:util';
import { errors, type KubeObject, type Node, type PersistentVolumeClaim, type Pod, type TokenRequest } from '@skiff/api';
import type { AdmissionRequest } from '@skiff/kernel';
import { podReferences } from '@skiff/plugin-authz-node';
import { NodeRestrictionError, type NodeRestrictionErrorCode } from './errors.js';
import { forbiddenChanges } from './labels.js';
import { MIRROR_POD_ANNOTATION, NODE_LEASE_NAMESPACE } from './names.js';

/** One request by a node, and the node's name. */
export interface NodeRequest {
  request: AdmissionRequest;
  node: string;
}

const refuse = ({ request, node }: NodeRequest, code: NodeRestrictionErrorCode, params: Record<string, string | number> = {}): never => {
  throw new NodeRestrictionError(request, code, { node, ...params });
};

const POD = { group: '', resource: 'pods' };
const NODE = { group: '', resource: 'nodes' };

async function storedPod(request: AdmissionRequest, name: string): Promise<Pod> {
  const pod = (await request.get(POD, request.namespace, name)) as Pod | undefined;
  if (!pod) throw errors.notFound('pods', '', name);
  return pod;
}

/** Its own Node only; no restricted labels; taints only as it registers. */
export function admitNode(nodeRequest: NodeRequest): void {
  const { request, node } = nodeRequest;
  if (request.name !== node) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_OTHER_NODE', { name: request.name });
  const object = request.object as Node | undefined;
  if (request.operation === 'CREATE' && object) {
    const labels = forbiddenChanges(object.metadata.labels);
    if (labels.length) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_SET_LABELS', { labels: labels.join(', ') });
  }
  if (request.operation === 'UPDATE' && object) {
    const old = request.oldObject as Node | undefined;
    if (!isDeepStrictEqual(object.spec?.taints ?? [], old?.spec?.taints ?? [])) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_TAINTS');
    const labels = forbiddenChanges(object.metadata.labels, old?.metadata.labels);
    if (labels.length) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_MODIFY_LABELS', { labels: labels.join(', ') });
  }
}

/** Pods: mirror pods of its own created and deleted, status of its own updated, its own evicted. */
export async function admitPod(nodeRequest: NodeRequest): Promise<void> {
  const { request, node } = nodeRequest;
  switch (request.subresource) {
    case '':
      if (request.operation === 'CREATE') return admitMirrorPod(nodeRequest, request.object as Pod);
      if (request.operation === 'DELETE') {
        const pod = (request.oldObject as Pod | undefined) ?? (await storedPod(request, request.name));
        if (pod.spec?.nodeName !== node) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_DELETE');
        return;
      }
      return refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_OPERATION', { operation: request.operation });
    case 'status': {
      if (request.operation !== 'UPDATE') return refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_OPERATION', { operation: `"${request.operation}"` });
      const old = request.oldObject as Pod;
      if (old.spec?.nodeName !== node) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_STATUS');
      if (!isDeepStrictEqual(old.metadata.labels ?? {}, (request.object as Pod).metadata.labels ?? {}))
        refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_STATUS_LABELS');
      return;
    }
    case 'eviction': {
      if (request.operation !== 'CREATE') return refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_OPERATION', { operation: request.operation });
      const name = request.name || request.object?.metadata?.name;
      if (!name) throw errors.badRequest('could not determine pod from request data');
      if ((await storedPod(request, name)).spec?.nodeName !== node) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_EVICTION');
      return;
    }
    default:
      return refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_SUBRESOURCE', { subresource: request.subresource });
  }
}

/** A mirror pod: bound to the node, owned (as controller) by its Node, using no API object. */
async function admitMirrorPod(nodeRequest: NodeRequest, pod: Pod): Promise<void> {
  const { request, node } = nodeRequest;
  if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] === undefined) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_NOT_MIRROR');
  if (pod.spec?.nodeName !== node) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_NODE_NAME');
  const owners = pod.metadata.ownerReferences ?? [];
  if (owners.length > 1) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_OWNERS');
  const owner = owners[0];
  if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) return refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_OWNER');
  if (!owner.controller) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_CONTROLLER');
  if (owner.blockOwnerDeletion) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_BLOCK_OWNER_DELETION');
  const nodeObject = await request.get(NODE, '', node);
  if (!nodeObject) throw errors.notFound('nodes', '', node);
  if (owner.uid !== nodeObject.metadata.uid)
    refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_OWNER_UID', { expected: nodeObject.metadata.uid ?? '', got: owner.uid });
  if (pod.spec?.serviceAccountName) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_REFERENCES', { what: 'a service account' });
  const uses = podReferences(pod);
  if (uses.secrets.size) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_REFERENCES', { what: 'secrets' });
  if (uses.configmaps.size) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_REFERENCES', { what: 'configmaps' });
  if ((pod.spec?.volumes ?? []).some((volume) => volume.persistentVolumeClaim))
    refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_POD_REFERENCES', { what: 'persistentvolumeclaims' });
}

/** Claims: only their status, and in it only the capacity and conditions. */
export function admitClaim(nodeRequest: NodeRequest): void {
  const { request } = nodeRequest;
  if (request.subresource !== 'status') return refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_PVC');
  if (request.operation !== 'UPDATE') return refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_OPERATION', { operation: `"${request.operation}"` });
  const fields = changedClaimFields(request.object as PersistentVolumeClaim, request.oldObject as PersistentVolumeClaim);
  if (fields.length) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_PVC_STATUS', { fields: fields.join(', ') });
}

/** What differs between two claims besides status.capacity, status.conditions and the resourceVersion. */
function changedClaimFields(next: PersistentVolumeClaim, old: PersistentVolumeClaim): string[] {
  const comparable = (claim: PersistentVolumeClaim): Record<string, unknown> => {
    const { resourceVersion: _version, ...metadata } = claim.metadata;
    const { capacity: _capacity, conditions: _conditions, ...status } = claim.status ?? {};
    return { metadata, spec: claim.spec ?? {}, status };
  };
  const a = comparable(next);
  const b = comparable(old);
  const fields: string[] = [];
  for (const part of ['metadata', 'spec', 'status'] as const) {
    const x = a[part] as Record<string, unknown>;
    const y = b[part] as Record<string, unknown>;
    for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) if (!isDeepStrictEqual(x[key], y[key])) fields.push(`${part}.${key}`);
  }
  return fields;
}

/** Tokens only for pods bound to the node, named by name and uid. */
export async function admitServiceAccount(nodeRequest: NodeRequest): Promise<void> {
  const { request, node } = nodeRequest;
  if (request.operation !== 'CREATE' || request.subresource !== 'token') return;
  const ref = (request.object as TokenRequest | undefined)?.spec?.boundObjectRef;
  if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) return refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_TOKEN_UNBOUND');
  if (!ref.uid) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_TOKEN_NO_UID');
  const pod = await storedPod(request, ref.name);
  if (ref.uid !== pod.metadata.uid) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_TOKEN_UID', { uid: ref.uid ?? '' });
  if (pod.spec?.nodeName !== node) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_TOKEN_OTHER_NODE');
}

/** Its own Lease in kube-node-lease only. */
export function admitLease(nodeRequest: NodeRequest): void {
  const { request, node } = nodeRequest;
  if (request.namespace !== NODE_LEASE_NAMESPACE) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_LEASE_NAMESPACE');
  if (nameOf(request) !== node) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_LEASE_NAME');
}

/** Its own CSINode only. */
export function admitCSINode(nodeRequest: NodeRequest): void {
  if (nameOf(nodeRequest.request) !== nodeRequest.node) refuse(nodeRequest, 'SKIFF_ERR_NODE_RESTRICTION_CSINODE');
}

/** A create's name is the object's own; other requests name the object in the path. */
const nameOf = (request: AdmissionRequest) =>
  request.operation === 'CREATE' ? ((request.object as KubeObject | undefined)?.metadata?.name ?? '') : request.name;
