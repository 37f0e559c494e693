import { objectsIn, t } from './language.js';
import { objectMetaSchema, typeMetaFields } from './meta.js';
import { resourceListSchema } from './pod.js';

const object = objectsIn('io.k8s.api.core.v1');

const namespaceConditionSchema = object(
  'NamespaceCondition',
  {
    type: t.string('Type of namespace controller condition.'),
    status: t.string('Status of the condition, one of True, False, Unknown.'),
    lastTransitionTime: t.time('Last time the condition transitioned from one status to another.'),
    reason: t.string("Unique, one-word, CamelCase reason for the condition's last transition."),
    message: t.string('Human-readable message indicating details about last transition.'),
  },
  'NamespaceCondition contains details about state of namespace.',
);

export const namespaceSchema = object(
  'Namespace',
  {
    ...typeMetaFields,
    metadata: objectMetaSchema,
    spec: object(
      'NamespaceSpec',
      { finalizers: t.array(t.string(), 'Finalizers is an opaque list of values that must be empty to permanently remove object from storage.') },
      'NamespaceSpec describes the attributes on a Namespace.',
    ),
    status: object(
      'NamespaceStatus',
      {
        phase: t.string({ description: 'Phase is the current lifecycle phase of the namespace: Active or Terminating.', goType: 'v1.NamespacePhase' }),
        conditions: t.array(namespaceConditionSchema, "Represents the latest available observations of a namespace's current state."),
      },
      'NamespaceStatus is information about the current status of a Namespace.',
    ),
  },
  'Namespace provides a scope for Names. Use of multiple namespaces is optional.',
  { group: '', version: 'v1', kind: 'Namespace' },
);

const taintSchema = object(
  'Taint',
  {
    key: t.string('Required. The taint key to be applied to a node.'),
    value: t.string('The taint value corresponding to the taint key.'),
    effect: t.string('Required. The effect of the taint on pods that do not tolerate the taint. Valid effects are NoSchedule, PreferNoSchedule and NoExecute.'),
    timeAdded: t.time('TimeAdded represents the time at which the taint was added.'),
  },
  'The node this Taint is attached to has the "effect" on any pod that does not tolerate the Taint.',
);

const nodeSpecSchema = object(
  'NodeSpec',
  {
    podCIDR: t.string('PodCIDR represents the pod IP range assigned to the node.'),
    podCIDRs: t.array(t.string(), 'podCIDRs represents the IP ranges assigned to the node for usage by Pods on that node.'),
    providerID: t.string('ID of the node assigned by the cloud provider in the format: <ProviderName>://<ProviderSpecificNodeID>'),
    unschedulable: t.boolean('Unschedulable controls node schedulability of new pods. By default, node is schedulable.'),
    taints: t.array(taintSchema, "If specified, the node's taints."),
    configSource: t.any("Deprecated: Previously used to specify the source of the node's configuration for the DynamicKubeletConfig feature."),
    externalID: t.string('Deprecated. Not all kubelets will set this field.'),
  },
  'NodeSpec describes the attributes that a node is created with.',
);

const nodeConditionSchema = object(
  'NodeCondition',
  {
    type: t.string('Type of node condition.'),
    status: t.string('Status of the condition, one of True, False, Unknown.'),
    lastHeartbeatTime: t.time('Last time we got an update on a given condition.'),
    lastTransitionTime: t.time('Last time the condition transit from one status to another.'),
    reason: t.string("(brief) reason for the condition's last transition."),
    message: t.string('Human readable message indicating details about last transition.'),
  },
  'NodeCondition contains condition information for a node.',
);

const nodeSystemInfoSchema = object(
  'NodeSystemInfo',
  {
    machineID: t.string('MachineID reported by the node.'),
    systemUUID: t.string('SystemUUID reported by the node.'),
    bootID: t.string('Boot ID reported by the node.'),
    kernelVersion: t.string("Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
    osImage: t.string('OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).'),
    containerRuntimeVersion: t.string('ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).'),
    kubeletVersion: t.string('Kubelet Version reported by the node.'),
    kubeProxyVersion: t.string('Deprecated: KubeProxy Version reported by the node.'),
    operatingSystem: t.string('The Operating System reported by the node'),
    architecture: t.string('The Architecture reported by the node'),
    swap: t.any('Swap Info reported by the node.'),
  },
  'NodeSystemInfo is a set of ids/uuids to uniquely identify the node.',
);

const nodeStatusSchema = object(
  'NodeStatus',
  {
    capacity: { ...resourceListSchema, description: 'Capacity represents the total resources of a node.' },
    allocatable: {
      ...resourceListSchema,
      description: 'Allocatable represents the resources of a node that are available for scheduling. Defaults to Capacity.',
    },
    phase: t.string('NodePhase is the recently observed lifecycle phase of the node. Deprecated.'),
    conditions: t.array(nodeConditionSchema, 'Conditions is an array of current observed node conditions.'),
    addresses: t.array(
      object(
        'NodeAddress',
        { type: t.string('Node address type, one of Hostname, ExternalIP or InternalIP.'), address: t.string('The node address.') },
        "NodeAddress contains information for the node's address.",
      ),
      'List of addresses reachable to the node.',
    ),
    daemonEndpoints: object(
      'NodeDaemonEndpoints',
      {
        kubeletEndpoint: object(
          'DaemonEndpoint',
          { Port: t.int32('Port number of the given endpoint.') },
          'DaemonEndpoint contains information about a single Daemon endpoint.',
        ),
      },
      'NodeDaemonEndpoints lists ports opened by daemons running on the Node.',
    ),
    nodeInfo: nodeSystemInfoSchema,
    images: t.array(
      object(
        'ContainerImage',
        { names: t.array(t.string(), 'Names by which this image is known.'), sizeBytes: t.int64('The size of the image in bytes.') },
        'Describe a container image',
      ),
      'List of container images on this node',
    ),
    volumesInUse: t.array(t.string(), 'List of attachable volumes in use (mounted) by the node.'),
    volumesAttached: t.array(t.any(), 'List of volumes that are attached to the node.'),
    config: t.any('Status of the config assigned to the node via the dynamic Kubelet config feature.'),
    runtimeHandlers: t.array(t.any(), 'The available runtime handlers.'),
    features: t.any('Features describes the set of features implemented by the CRI implementation.'),
    declaredFeatures: t.array(t.string(), 'DeclaredFeatures represents the features related to feature gates that are declared by the node.'),
  },
  'NodeStatus is information about the current status of a node.',
);

export const nodeSchema = object(
  'Node',
  { ...typeMetaFields, metadata: objectMetaSchema, spec: nodeSpecSchema, status: nodeStatusSchema },
  'Node is a worker node in Kubernetes. Each node will have a unique identifier in the cache (i.e. in etcd).',
  { group: '', version: 'v1', kind: 'Node' },
);
