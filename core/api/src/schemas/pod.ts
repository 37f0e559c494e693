import { objectsIn, t } from './language.js';
import { deleteOptionsSchema, objectMetaSchema, typeMetaFields } from './meta.js';
import { objectReferenceSchema } from './object-reference.js';

const object = objectsIn('io.k8s.api.core.v1');

/** A map of resource name to quantity ("cpu": "500m"). */
export const resourceListSchema = t.map(t.quantity(), { goType: 'v1.ResourceList' });

const containerPortSchema = object(
  'ContainerPort',
  {
    name: t.string('If specified, this must be an IANA_SVC_NAME and unique within the pod. Each named port in a pod must have a unique name.'),
    hostPort: t.int32('Number of port to expose on the host. If specified, this must be a valid port number, 0 < x < 65536.'),
    containerPort: t.int32("Number of port to expose on the pod's IP address. This must be a valid port number, 0 < x < 65536."),
    protocol: t.string({ description: 'Protocol for port. Must be UDP, TCP, or SCTP. Defaults to "TCP".', goType: 'v1.Protocol' }),
    hostIP: t.string('What host IP to bind the external port to.'),
  },
  'ContainerPort represents a network port in a single container.',
);

const envVarSchema = object(
  'EnvVar',
  {
    name: t.string('Name of the environment variable.'),
    value: t.string(
      'Variable references $(VAR_NAME) are expanded using the previously defined environment variables in the container and any service environment variables.',
    ),
    valueFrom: t.any("Source for the environment variable's value. Cannot be used if value is not empty."),
  },
  'EnvVar represents an environment variable present in a Container.',
);

const envFromSourceSchema = object(
  'EnvFromSource',
  {
    prefix: t.string('Optional text to prepend to the name of each environment variable.'),
    configMapRef: t.any('The ConfigMap to select from'),
    secretRef: t.any('The Secret to select from'),
  },
  'EnvFromSource represents the source of a set of ConfigMaps or Secrets',
);

const resourceRequirementsSchema = object(
  'ResourceRequirements',
  {
    limits: { ...resourceListSchema, description: 'Limits describes the maximum amount of compute resources allowed.' },
    requests: {
      ...resourceListSchema,
      description:
        'Requests describes the minimum amount of compute resources required. If Requests is omitted for a container, it defaults to Limits if that is explicitly specified.',
    },
    claims: t.array(t.any(), 'Claims lists the names of resources, defined in spec.resourceClaims, that are used by this container.'),
  },
  'ResourceRequirements describes the compute resource requirements.',
);

const volumeMountSchema = object(
  'VolumeMount',
  {
    name: t.string('This must match the Name of a Volume.'),
    readOnly: t.boolean('Mounted read-only if true, read-write otherwise (false or unspecified). Defaults to false.'),
    recursiveReadOnly: t.string('RecursiveReadOnly specifies whether read-only mounts should be handled recursively.'),
    mountPath: t.string("Path within the container at which the volume should be mounted. Must not contain ':'."),
    subPath: t.string('Path within the volume from which the container\'s volume should be mounted. Defaults to "" (volume\'s root).'),
    mountPropagation: t.string('mountPropagation determines how mounts are propagated from the host to container and the other way around.'),
    subPathExpr: t.string("Expanded path within the volume from which the container's volume should be mounted."),
  },
  'VolumeMount describes a mounting of a Volume within a container.',
);

export const containerSchema = object(
  'Container',
  {
    name: t.string('Name of the container specified as a DNS_LABEL. Each container in a pod must have a unique name (DNS_LABEL). Cannot be updated.'),
    image: t.string('Container image name.'),
    command: t.array(t.string(), "Entrypoint array. Not executed within a shell. The container image's ENTRYPOINT is used if this is not provided."),
    args: t.array(t.string(), "Arguments to the entrypoint. The container image's CMD is used if this is not provided."),
    workingDir: t.string("Container's working directory. If not specified, the container runtime's default will be used."),
    ports: t.array(containerPortSchema, 'List of ports to expose from the container.'),
    envFrom: t.array(envFromSourceSchema, 'List of sources to populate environment variables in the container.'),
    env: t.array(envVarSchema, 'List of environment variables to set in the container. Cannot be updated.'),
    resources: resourceRequirementsSchema,
    resizePolicy: t.array(t.any(), 'Resources resize policy for the container.'),
    restartPolicy: t.string('RestartPolicy defines the restart behavior of individual containers in a pod. Only "Always" is supported, for init containers.'),
    volumeMounts: t.array(volumeMountSchema, "Pod volumes to mount into the container's filesystem. Cannot be updated."),
    volumeDevices: t.array(t.any(), 'volumeDevices is the list of block devices to be used by the container.'),
    livenessProbe: t.any('Periodic probe of container liveness. Container will be restarted if the probe fails.'),
    readinessProbe: t.any('Periodic probe of container service readiness. Container will be removed from service endpoints if the probe fails.'),
    startupProbe: t.any('StartupProbe indicates that the Pod has successfully initialized.'),
    lifecycle: t.any('Actions that the management system should take in response to container lifecycle events.'),
    terminationMessagePath: t.string(
      "Optional: Path at which the file to which the container's termination message will be written is mounted into the container's filesystem. Defaults to /dev/termination-log.",
    ),
    terminationMessagePolicy: t.string({
      description: 'Indicate how the termination message should be populated. File will use the contents of terminationMessagePath. Defaults to File.',
      goType: 'v1.TerminationMessagePolicy',
    }),
    imagePullPolicy: t.string({
      description: 'Image pull policy. One of Always, Never, IfNotPresent. Defaults to Always if :latest tag is specified, or IfNotPresent otherwise.',
      goType: 'v1.PullPolicy',
    }),
    securityContext: t.any('SecurityContext defines the security options the container should be run with.'),
    stdin: t.boolean('Whether this container should allocate a buffer for stdin in the container runtime.'),
    stdinOnce: t.boolean('Whether the container runtime should close the stdin channel after it has been opened by a single attach.'),
    tty: t.boolean("Whether this container should allocate a TTY for itself, also requires 'stdin' to be true."),
  },
  'A single application container that you want to run within a pod.',
);

// Every volume source is modelled as "any"; naming them keeps strict decoding able to spot typos.
// The order is the one Kubernetes checks them in, so validation reports the same one as extra.
export const VOLUME_SOURCE_FIELDS = [
  'emptyDir',
  'hostPath',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'flocker',
  'persistentVolumeClaim',
  'rbd',
  'cinder',
  'cephfs',
  'quobyte',
  'downwardAPI',
  'fc',
  'flexVolume',
  'configMap',
  'azureFile',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'azureDisk',
  'csi',
  'projected',
  'scaleIO',
  'storageos',
  'ephemeral',
  'image',
] as const;

export const volumeSchema = object(
  'Volume',
  {
    name: t.string('name of the volume. Must be a DNS_LABEL and unique within the pod.'),
    ...Object.fromEntries(VOLUME_SOURCE_FIELDS.map((source) => [source, t.any()])),
  },
  'Volume represents a named volume in a pod that may be accessed by any container in the pod.',
);

const tolerationSchema = object(
  'Toleration',
  {
    key: t.string('Key is the taint key that the toleration applies to. Empty means match all taint keys.'),
    operator: t.string("Operator represents a key's relationship to the value. Valid operators are Exists and Equal. Defaults to Equal."),
    value: t.string('Value is the taint value the toleration matches to.'),
    effect: t.string('Effect indicates the taint effect to match. Empty means match all taint effects.'),
    tolerationSeconds: t.int64('TolerationSeconds represents the period of time the toleration (which must be of effect NoExecute) tolerates the taint.'),
  },
  'The pod this Toleration is attached to tolerates any taint that matches the triple <key,value,effect> using the matching operator <operator>.',
);

const nameOnly = (name: string, field: string, description: string) => object(name, { [field]: t.string() }, description);

export const podSpecSchema = object(
  'PodSpec',
  {
    volumes: t.array(volumeSchema, 'List of volumes that can be mounted by containers belonging to the pod.'),
    initContainers: t.array(containerSchema, 'List of initialization containers belonging to the pod.'),
    containers: t.array(containerSchema, 'List of containers belonging to the pod. There must be at least one container in a Pod. Cannot be updated.'),
    ephemeralContainers: t.array(t.any(), 'List of ephemeral containers run in this pod.'),
    restartPolicy: t.string({
      description: 'Restart policy for all containers within the pod. One of Always, OnFailure, Never. Default to Always.',
      goType: 'v1.RestartPolicy',
    }),
    terminationGracePeriodSeconds: t.int64('Optional duration in seconds the pod needs to terminate gracefully. Defaults to 30 seconds.'),
    activeDeadlineSeconds: t.int64(
      'Optional duration in seconds the pod may be active on the node relative to StartTime before the system will actively try to mark it failed and kill associated containers.',
    ),
    dnsPolicy: t.string({
      description: "Set DNS policy for the pod. Defaults to \"ClusterFirst\". Valid values are 'ClusterFirstWithHostNet', 'ClusterFirst', 'Default' or 'None'.",
      goType: 'v1.DNSPolicy',
    }),
    nodeSelector: t.map(
      t.string(),
      "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node.",
    ),
    serviceAccountName: t.string('ServiceAccountName is the name of the ServiceAccount to use to run this pod.'),
    serviceAccount: t.string('DeprecatedServiceAccount is a deprecated alias for ServiceAccountName.'),
    automountServiceAccountToken: t.boolean('AutomountServiceAccountToken indicates whether a service account token should be automatically mounted.'),
    nodeName: t.string(
      'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName.',
    ),
    hostNetwork: t.boolean("Host networking requested for this pod. Use the host's network namespace. Default to false."),
    hostPID: t.boolean("Use the host's pid namespace. Optional: Default to false."),
    hostIPC: t.boolean("Use the host's ipc namespace. Optional: Default to false."),
    shareProcessNamespace: t.boolean('Share a single process namespace between all of the containers in a pod.'),
    securityContext: t.any('SecurityContext holds pod-level security attributes and common container settings.'),
    imagePullSecrets: t.array(
      nameOnly(
        'LocalObjectReference',
        'name',
        'LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace.',
      ),
      'ImagePullSecrets is an optional list of references to secrets in the same namespace to use for pulling any of the images used by this PodSpec.',
    ),
    hostname: t.string("Specifies the hostname of the Pod. If not specified, the pod's hostname will be set to a system-defined value."),
    subdomain: t.string('If specified, the fully qualified Pod hostname will be "<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>".'),
    affinity: t.any("If specified, the pod's scheduling constraints"),
    schedulerName: t.string(
      'If specified, the pod will be dispatched by specified scheduler. If not specified, the pod will be dispatched by default scheduler.',
    ),
    tolerations: t.array(tolerationSchema, "If specified, the pod's tolerations."),
    hostAliases: t.array(t.any(), "HostAliases is an optional list of hosts and IPs that will be injected into the pod's hosts file if specified."),
    priorityClassName: t.string(
      'If specified, indicates the pod\'s priority. "system-node-critical" and "system-cluster-critical" are two special keywords which indicate the highest priorities.',
    ),
    priority: t.int32('The priority value. Various system components use this field to find the priority of the pod.'),
    dnsConfig: t.any('Specifies the DNS parameters of a pod.'),
    readinessGates: t.array(
      nameOnly('PodReadinessGate', 'conditionType', 'PodReadinessGate contains the reference to a pod condition'),
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True"',
    ),
    runtimeClassName: t.string('RuntimeClassName refers to a RuntimeClass object in the node.k8s.io group, which should be used to run this pod.'),
    enableServiceLinks: t.boolean(
      "EnableServiceLinks indicates whether information about services should be injected into pod's environment variables. Optional: Defaults to true.",
    ),
    preemptionPolicy: t.string('PreemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority.'),
    overhead: { ...resourceListSchema, description: 'Overhead represents the resource overhead associated with running a pod for a given RuntimeClass.' },
    topologySpreadConstraints: t.array(t.any(), 'TopologySpreadConstraints describes how a group of pods ought to spread across topology domains.'),
    setHostnameAsFQDN: t.boolean("If true the pod's hostname will be configured as the pod's FQDN, rather than the leaf name (the default)."),
    os: t.any('Specifies the OS of the containers in the pod.'),
    hostUsers: t.boolean("Use the host's user namespace. Optional: Default to true."),
    schedulingGates: t.array(
      nameOnly('PodSchedulingGate', 'name', 'PodSchedulingGate is associated to a Pod to guard its scheduling.'),
      'SchedulingGates is an opaque list of values that if specified will block scheduling the pod.',
    ),
    resourceClaims: t.array(t.any(), 'ResourceClaims defines which ResourceClaims must be allocated and reserved before the Pod is allowed to start.'),
    resources: t.any('Resources is the total amount of CPU and Memory resources required by all containers in the pod.'),
  },
  'PodSpec is a description of a pod.',
);

const podConditionSchema = object(
  'PodCondition',
  {
    type: t.string('Type is the type of the condition.'),
    observedGeneration: t.int64('If set, this represents the .metadata.generation that the pod condition was set based upon.'),
    status: t.string('Status is the status of the condition. Can be True, False, Unknown.'),
    lastProbeTime: t.time('Last time we probed the condition.'),
    lastTransitionTime: t.time('Last time the condition transitioned from one status to another.'),
    reason: t.string("Unique, one-word, CamelCase reason for the condition's last transition."),
    message: t.string('Human-readable message indicating details about last transition.'),
  },
  'PodCondition contains details for the current condition of this pod.',
);

const podIPSchema = object('PodIP', { ip: t.string('IP is the IP address assigned to the pod') }, 'PodIP represents a single IP address allocated to the pod.');
const hostIPSchema = object(
  'HostIP',
  { ip: t.string('IP is the IP address assigned to the host') },
  'HostIP represents a single IP address allocated to the host.',
);

// Status is written by Skiff's own components; container statuses stay loosely typed so newer
// kubelet fields pass through.
export const podStatusSchema = object(
  'PodStatus',
  {
    observedGeneration: t.int64('If set, this represents the .metadata.generation that the pod status was set based upon.'),
    phase: t.string({
      description: 'The phase of a Pod is a simple, high-level summary of where the Pod is in its lifecycle: Pending, Running, Succeeded, Failed or Unknown.',
      goType: 'v1.PodPhase',
    }),
    conditions: t.array(podConditionSchema, 'Current service state of pod.'),
    message: t.string('A human readable message indicating details about why the pod is in this condition.'),
    reason: t.string("A brief CamelCase message indicating details about why the pod is in this state. e.g. 'Evicted'"),
    nominatedNodeName: t.string(
      'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.',
    ),
    hostIP: t.string('hostIP holds the IP address of the host to which the pod is assigned. Empty if the pod has not started yet.'),
    hostIPs: t.array(hostIPSchema, 'hostIPs holds the IP addresses allocated to the host.'),
    podIP: t.string('podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.'),
    podIPs: t.array(podIPSchema, 'podIPs holds the IP addresses allocated to the pod.'),
    startTime: t.time(
      'RFC 3339 date and time at which the object was acknowledged by the Kubelet. This is before the Kubelet pulled the container image(s) for the pod.',
    ),
    initContainerStatuses: t.array(t.any(), 'Statuses of init containers in this pod.'),
    containerStatuses: t.array(t.any(), 'Statuses of containers in this pod. Each container in the pod should have at most one status in this list.'),
    qosClass: t.string('The Quality of Service (QOS) classification assigned to the pod based on resource requirements.'),
    ephemeralContainerStatuses: t.array(t.any(), 'Statuses for any ephemeral containers that have run in this pod.'),
    resize: t.string("Status of resources resize desired for pod's containers."),
    resourceClaimStatuses: t.array(t.any(), 'Status of resource claims.'),
    extendedResourceClaimStatus: t.any('Status of extended resource claim backed by DRA.'),
  },
  'PodStatus represents information about the status of a pod. Status may trail the actual state of a system.',
);

export const podSchema = object(
  'Pod',
  {
    ...typeMetaFields,
    metadata: objectMetaSchema,
    spec: podSpecSchema,
    status: podStatusSchema,
  },
  'Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.',
  { group: '', version: 'v1', kind: 'Pod' },
);

export const podTemplateSpecSchema = object(
  'PodTemplateSpec',
  { metadata: objectMetaSchema, spec: podSpecSchema },
  'PodTemplateSpec describes the data a pod should have when created from a template',
);

export const bindingSchema = object(
  'Binding',
  { ...typeMetaFields, metadata: objectMetaSchema, target: objectReferenceSchema },
  'Binding ties one object to another; for example, a pod is bound to a node by a scheduler.',
  { group: '', version: 'v1', kind: 'Binding' },
);

export const evictionSchema = objectsIn('io.k8s.api.policy.v1')(
  'Eviction',
  { ...typeMetaFields, metadata: objectMetaSchema, deleteOptions: deleteOptionsSchema },
  'Eviction evicts a pod from its node subject to certain policies and safety constraints.',
  { group: 'policy', version: 'v1', kind: 'Eviction' },
);
