import type {
  FlowcontrolV1Subject,
  FlowSchema,
  NonResourcePolicyRule,
  PolicyRulesWithSubjects,
  PriorityLevelConfiguration,
  PriorityLevelConfigurationSpec,
  ResourcePolicyRule,
} from '@skiff/api';
import { AUTO_UPDATE_ANNOTATION } from './names.js';

// Kubernetes' bootstrap configuration of API Priority and Fairness (flowcontrol.apiserver.k8s.io/v1), as data:
// the mandatory objects every server keeps as they are, and the suggested ones it creates when missing and keeps
// up to date while their `apf.kubernetes.io/autoupdate-spec` annotation says "true".

const MASTERS = 'system:masters';
const AUTHENTICATED = 'system:authenticated';
const UNAUTHENTICATED = 'system:unauthenticated';
const NODES = 'system:nodes';
const SERVICE_ACCOUNTS = 'system:serviceaccounts';
const CONTROLLER_MANAGER = 'system:kube-controller-manager';
const SCHEDULER = 'system:kube-scheduler';

const group = (name: string): FlowcontrolV1Subject => ({ kind: 'Group', group: { name } });
const user = (name: string): FlowcontrolV1Subject => ({ kind: 'User', user: { name } });
const kubeSystemServiceAccount = (name: string): FlowcontrolV1Subject => ({ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name } });

const EVERY_RESOURCE: ResourcePolicyRule = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] };
const EVERY_NON_RESOURCE: NonResourcePolicyRule = { verbs: ['*'], nonResourceURLs: ['*'] };
const GET_CREATE_UPDATE = ['get', 'create', 'update'];

/** Rules for every request of the subjects. */
const everything = (...subjects: FlowcontrolV1Subject[]): PolicyRulesWithSubjects => ({
  subjects,
  resourceRules: [EVERY_RESOURCE],
  nonResourceRules: [EVERY_NON_RESOURCE],
});

function flowSchema(
  name: string,
  level: string,
  matchingPrecedence: number,
  distinguisher: 'ByUser' | 'ByNamespace' | undefined,
  rules: PolicyRulesWithSubjects,
): FlowSchema {
  return {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
    spec: {
      priorityLevelConfiguration: { name: level },
      matchingPrecedence,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules: [rules],
    },
  };
}

function priorityLevel(name: string, spec: PriorityLevelConfigurationSpec): PriorityLevelConfiguration {
  return {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
    spec,
  };
}

function queued(
  nominalConcurrencyShares: number,
  lendablePercent: number,
  queues: number,
  handSize: number,
  queueLengthLimit: number,
): PriorityLevelConfigurationSpec {
  return {
    type: 'Limited',
    limited: { nominalConcurrencyShares, lendablePercent, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit } } },
  };
}

export const EXEMPT = 'exempt';
export const CATCH_ALL = 'catch-all';

export const MANDATORY_PRIORITY_LEVELS: readonly PriorityLevelConfiguration[] = [
  priorityLevel(EXEMPT, { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
  priorityLevel(CATCH_ALL, { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } }),
];

export const MANDATORY_FLOW_SCHEMAS: readonly FlowSchema[] = [
  flowSchema(EXEMPT, EXEMPT, 1, undefined, everything(group(MASTERS))),
  flowSchema(CATCH_ALL, CATCH_ALL, 10000, 'ByUser', everything(group(UNAUTHENTICATED), group(AUTHENTICATED))),
];

export const SUGGESTED_PRIORITY_LEVELS: readonly PriorityLevelConfiguration[] = [
  priorityLevel('system', queued(30, 33, 64, 6, 50)),
  priorityLevel('node-high', queued(40, 25, 64, 6, 50)),
  priorityLevel('leader-election', queued(10, 0, 16, 4, 50)),
  priorityLevel('workload-high', queued(40, 50, 128, 6, 50)),
  priorityLevel('workload-low', queued(100, 90, 128, 6, 50)),
  priorityLevel('global-default', queued(20, 50, 128, 6, 50)),
];

export const SUGGESTED_FLOW_SCHEMAS: readonly FlowSchema[] = [
  flowSchema('probes', EXEMPT, 2, undefined, {
    subjects: [group(UNAUTHENTICATED), group(AUTHENTICATED)],
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
  }),
  flowSchema('system-leader-election', 'leader-election', 100, 'ByUser', {
    subjects: [user(CONTROLLER_MANAGER), user(SCHEDULER), kubeSystemServiceAccount('*')],
    resourceRules: [{ verbs: GET_CREATE_UPDATE, apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] }],
  }),
  flowSchema('endpoint-controller', 'workload-high', 150, 'ByUser', {
    subjects: [user(CONTROLLER_MANAGER), kubeSystemServiceAccount('endpoint-controller'), kubeSystemServiceAccount('endpointslicemirroring-controller')],
    resourceRules: [{ verbs: GET_CREATE_UPDATE, apiGroups: [''], resources: ['endpoints'], namespaces: ['*'] }],
  }),
  flowSchema('workload-leader-election', 'leader-election', 200, 'ByUser', {
    subjects: [kubeSystemServiceAccount('*')],
    resourceRules: [
      { verbs: GET_CREATE_UPDATE, apiGroups: [''], resources: ['endpoints', 'configmaps'], namespaces: ['*'] },
      { verbs: GET_CREATE_UPDATE, apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
    ],
  }),
  flowSchema('system-node-high', 'node-high', 400, 'ByUser', {
    subjects: [group(NODES)],
    resourceRules: [
      { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true, namespaces: ['*'] },
      { verbs: ['*'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
    ],
  }),
  flowSchema('system-nodes', 'system', 500, 'ByUser', everything(group(NODES))),
  flowSchema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', everything(user(CONTROLLER_MANAGER))),
  flowSchema('kube-scheduler', 'workload-high', 800, 'ByNamespace', everything(user(SCHEDULER))),
  flowSchema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', everything(kubeSystemServiceAccount('*'))),
  flowSchema('service-accounts', 'workload-low', 9000, 'ByUser', everything(group(SERVICE_ACCOUNTS))),
  flowSchema('global-default', 'global-default', 9900, 'ByUser', everything(group(UNAUTHENTICATED), group(AUTHENTICATED))),
];
