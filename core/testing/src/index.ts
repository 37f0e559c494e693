export { startTestCluster, type TestCluster, type TestClusterOptions } from './cluster.js';
export { startControlPlane, type ControlPlane, type ControlPlaneOptions, type ControlPlanePlugin } from './control-plane.js';
export { waitFor, type WaitForOptions } from '@skiff/kernel';
export { admissionRequest, admit } from './admission.js';
export { FreezableRelay } from './relay.js';
