import { defaultNode, nodeSchema, validateNode, type KubeObject, type Node } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { age, AGE_COLUMN, column, NAME_COLUMN } from './columns.js';
import { selectorField } from './field-selectors.js';
import { ALL_VERBS, decoderFor, splitSpecAndStatus } from './lifecycle.js';

const ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';
const LEGACY_ROLE_LABEL = 'kubernetes.io/role';

/** Roles from `node-role.kubernetes.io/<role>` labels and the legacy `kubernetes.io/role`, sorted. */
function nodeRoles(node: Node): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith(ROLE_LABEL_PREFIX) && key.length > ROLE_LABEL_PREFIX.length) roles.add(key.slice(ROLE_LABEL_PREFIX.length));
    else if (key === LEGACY_ROLE_LABEL && value) roles.add(value);
  }
  return [...roles].sort();
}

/** "Ready", "NotReady" or "Unknown" from the Ready condition, plus ",SchedulingDisabled" when cordoned. */
function nodeStatus(node: Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable) status.push('SchedulingDisabled');
  return status.join(',');
}

const address = (node: Node, type: string) => node.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>';

function nodeCells(object: KubeObject, now: number): unknown[] {
  const node = object as Node;
  const info = node.status?.nodeInfo ?? {};
  return [
    object.metadata.name,
    nodeStatus(node),
    nodeRoles(node).join(',') || '<none>',
    age(object, now),
    info.kubeletVersion ?? '',
    address(node, 'InternalIP'),
    address(node, 'ExternalIP'),
    info.osImage || '<unknown>',
    info.kernelVersion || '<unknown>',
    info.containerRuntimeVersion || '<unknown>',
  ];
}

export const nodes: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Node',
  listKind: 'NodeList',
  resource: 'nodes',
  singular: 'node',
  namespaced: false,
  shortNames: ['no'],
  subresources: ['status'],
  verbs: ALL_VERBS,
  hasStatus: true,
  decode: decoderFor(nodeSchema),
  defaults: (object) => defaultNode(object as Node),
  validate: (object, old) => validateNode(object as Node, old as Node | undefined),
  // A kubelet registers its node with its status, so create keeps it.
  prepareForUpdate: splitSpecAndStatus(),
  fieldSelectors: {
    'spec.unschedulable': selectorField<Node>((node) => Boolean(node.spec?.unschedulable)),
  },
  table: {
    columns: [
      NAME_COLUMN,
      column('Status', 'The status of the node'),
      column('Roles', 'The roles of the node'),
      AGE_COLUMN,
      column('Version', 'Kubelet Version reported by the node.'),
      column('Internal-IP', 'List of addresses reachable to the node.', 1),
      column('External-IP', 'List of addresses reachable to the node.', 1),
      column('OS-Image', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', 1),
      column('Kernel-Version', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1),
      column('Container-Runtime', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).', 1),
    ],
    cells: nodeCells,
  },
};
