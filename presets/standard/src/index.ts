import { definePreset } from '@skiff/kernel';

/**
 * The standard preset: a cluster several people can share. The dev preset's cluster (one process, simulated
 * containers) behind the whole security chain — HTTPS with the cluster CA; x509 client certificates and
 * ServiceAccount tokens (OIDC when you add and configure `@skiff/plugin-authn-oidc`), the admin kubeconfig a
 * `system:masters` certificate; anonymous requests reach only the health checks and /version; the Node
 * authorizer, then RBAC with upstream's default roles; admission by NamespaceLifecycle, LimitRanger,
 * ServiceAccount, NodeRestriction, PodSecurity, Priority, DefaultTolerationSeconds, the admission webhooks,
 * ValidatingAdmissionPolicy and ResourceQuota (with its controller); an audit log of every request in
 * `<dataDir>/audit.log`; Secrets encrypted in the store with a key generated into `<dataDir>/encryption-config.yaml`.
 */
export default definePreset({
  name: '@skiff/preset-standard',
  plugins: [
    '@skiff/store',
    '@skiff/plugin-encryption-at-rest',
    '@skiff/apiserver',
    '@skiff/plugin-audit-log',
    '@skiff/plugin-apiextensions',
    '@skiff/plugin-service-allocator',
    '@skiff/plugin-flowcontrol-apf',
    ['@skiff/plugin-authn-x509', { adminCertificate: true }],
    '@skiff/plugin-authn-serviceaccount',
    '@skiff/plugin-authn-anonymous',
    '@skiff/plugin-authz-node',
    '@skiff/plugin-authz-rbac',
    '@skiff/plugin-authz-public-info',
    '@skiff/plugin-admission-namespace-lifecycle',
    '@skiff/plugin-admission-limit-ranger',
    '@skiff/plugin-admission-service-account',
    '@skiff/plugin-admission-node-restriction',
    '@skiff/plugin-admission-pod-security',
    '@skiff/plugin-admission-priority',
    '@skiff/plugin-admission-default-toleration-seconds',
    '@skiff/plugin-admission-webhooks',
    '@skiff/plugin-admission-validating-policy',
    '@skiff/plugin-admission-resource-quota',
    '@skiff/controller-manager',
    '@skiff/plugin-controller-deployment',
    '@skiff/plugin-controller-replicaset',
    '@skiff/plugin-controller-daemonset',
    '@skiff/plugin-controller-statefulset',
    '@skiff/plugin-controller-job',
    '@skiff/plugin-storage-host-path',
    '@skiff/plugin-controller-garbage-collector',
    '@skiff/plugin-controller-namespace',
    '@skiff/plugin-controller-serviceaccount',
    '@skiff/plugin-controller-root-ca-publisher',
    '@skiff/plugin-controller-endpointslice',
    '@skiff/plugin-controller-endpoints',
    '@skiff/plugin-controller-service-lb',
    '@skiff/plugin-controller-resource-quota',
    '@skiff/scheduler',
    '@skiff/plugin-scheduler-resources-fit',
    '@skiff/plugin-scheduler-least-allocated',
    '@skiff/kubelet',
    '@skiff/plugin-cri-simulated',
    '@skiff/plugin-network-ipam',
    '@skiff/plugin-volumes-builtin',
  ],
  config: {
    nodes: 1,
  },
});
