export { startTestCluster, type TestCluster, type TestClusterOptions } from './cluster.js';
export { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './control-plane.js';
export { waitFor } from './wait.js';
export { admissionRequest, admit } from './admission.js';
