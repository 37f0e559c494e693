import { definePreset } from '@skiff/kernel';

/**
 * The highly available preset: the standard preset's cluster with its state in etcd instead of LMDB, so several API
 * servers share it, and with leader election (coordination.k8s.io Leases, upstream's 15 s / 10 s / 2 s) for the
 * controller manager and the scheduler, so a copy of each can run beside every API server and only one acts. The API
 * servers keep the `kubernetes` Service's endpoints to the live ones (lease endpoint reconciler). Run the components
 * apart: `skiff apiserver --preset ha`, `skiff controller-manager --preset ha --server …`, `skiff scheduler --preset ha
 * --server …`; name your etcd members with `["@skiff/plugin-store-etcd", { "endpoints": [...] }]` in the config (the
 * default is one member at http://127.0.0.1:2379).
 */
export default definePreset({
  name: '@skiff/preset-ha',
  extends: ['@skiff/preset-standard'],
  plugins: [
    ['@skiff/store', false],
    ['@skiff/plugin-store-etcd', { endpoints: ['http://127.0.0.1:2379'] }],
    ['@skiff/controller-manager', { leaderElection: { leaderElect: true } }],
    ['@skiff/scheduler', { leaderElection: { leaderElect: true } }],
  ],
});
