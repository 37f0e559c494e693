import { definePreset } from '@skiff/kernel';

/**
 * The dev preset: the whole cluster in one process, with kube-apiserver's and kube-controller-manager's default set —
 * LMDB store, HTTPS API server with a generated CA, CustomResourceDefinitions, API aggregation (APIServices), Service
 * address allocation, API Priority and Fairness, static token, client certificate (the cluster CA's) and ServiceAccount token authentication with a
 * bootstrapped admin token, anonymous access to the health checks and /version only, allow-all authorization for
 * authenticated users; NamespaceLifecycle, LimitRanger, ServiceAccount, Priority, DefaultTolerationSeconds, RuntimeClass,
 * admission webhooks, ValidatingAdmissionPolicy and ResourceQuota admission; the deployment / replicaset /
 * replicationcontroller / daemonset / statefulset / job / cronjob / garbage-collector / namespace / serviceaccount /
 * root-ca-cert-publisher / endpointslice / endpointslice-mirroring / endpoints / disruption / service-lb /
 * resourcequota / horizontalpodautoscaling controllers, host-path volumes (a default StorageClass, provisioning and binding), the node lifecycle
 * controller; for nodes that join from other machines (skiff join) bootstrap tokens, the signed cluster-info ConfigMap,
 * the CSR approver, signer and cleaner and node IPAM; the scheduler with upstream's default plugins (one package each), and kubelets on a simulated runtime
 * with a simple IPAM network and the built-in volume types.
 */
export default definePreset({
  name: '@skiff/preset-dev',
  plugins: [
    '@skiff/store',
    '@skiff/apiserver',
    '@skiff/plugin-apiextensions',
    '@skiff/plugin-aggregator',
    '@skiff/plugin-metrics-server',
    '@skiff/plugin-service-allocator',
    '@skiff/plugin-flowcontrol-apf',
    '@skiff/plugin-authn-token-file',
    '@skiff/plugin-authn-x509',
    '@skiff/plugin-authn-serviceaccount',
    '@skiff/plugin-authn-bootstrap-token',
    '@skiff/plugin-authn-anonymous',
    '@skiff/plugin-authz-public-info',
    '@skiff/plugin-authz-always-allow',
    '@skiff/plugin-admission-namespace-lifecycle',
    '@skiff/plugin-admission-limit-ranger',
    '@skiff/plugin-admission-service-account',
    '@skiff/plugin-admission-priority',
    '@skiff/plugin-admission-default-toleration-seconds',
    '@skiff/plugin-admission-runtime-class',
    '@skiff/plugin-admission-webhooks',
    '@skiff/plugin-admission-validating-policy',
    '@skiff/plugin-admission-resource-quota',
    '@skiff/controller-manager',
    '@skiff/plugin-controller-deployment',
    '@skiff/plugin-controller-replicaset',
    '@skiff/plugin-controller-daemonset',
    '@skiff/plugin-controller-statefulset',
    '@skiff/plugin-controller-job',
    '@skiff/plugin-controller-hpa',
    '@skiff/plugin-storage-host-path',
    '@skiff/plugin-controller-garbage-collector',
    '@skiff/plugin-controller-namespace',
    '@skiff/plugin-controller-serviceaccount',
    '@skiff/plugin-controller-root-ca-publisher',
    '@skiff/plugin-controller-endpointslice',
    '@skiff/plugin-controller-endpoints',
    '@skiff/plugin-controller-endpointslice-mirroring',
    '@skiff/plugin-controller-disruption',
    '@skiff/plugin-controller-service-lb',
    '@skiff/plugin-controller-resource-quota',
    '@skiff/plugin-controller-node-lifecycle',
    '@skiff/plugin-controller-node-ipam',
    '@skiff/plugin-controller-csr',
    '@skiff/plugin-controller-bootstrap-signer',
    '@skiff/scheduler',
    '@skiff/plugin-scheduler-priority-sort',
    '@skiff/plugin-scheduler-scheduling-gates',
    '@skiff/plugin-scheduler-node-unschedulable',
    '@skiff/plugin-scheduler-node-name',
    '@skiff/plugin-scheduler-taint-toleration',
    '@skiff/plugin-scheduler-node-affinity',
    '@skiff/plugin-scheduler-node-ports',
    '@skiff/plugin-scheduler-resources-fit',
    '@skiff/plugin-scheduler-volume-binding',
    '@skiff/plugin-scheduler-pod-topology-spread',
    '@skiff/plugin-scheduler-inter-pod-affinity',
    '@skiff/plugin-scheduler-default-preemption',
    '@skiff/plugin-scheduler-balanced-allocation',
    '@skiff/plugin-scheduler-image-locality',
    '@skiff/plugin-scheduler-default-binder',
    '@skiff/kubelet',
    '@skiff/plugin-cri-simulated',
    '@skiff/plugin-network-ipam',
    '@skiff/plugin-volumes-builtin',
  ],
  config: {
    nodes: 1,
  },
});
