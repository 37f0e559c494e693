export { startTestCluster, type TestCluster, type TestClusterOptions } from './cluster.js';
export { waitFor } from './wait.js';
export { admissionRequest, admit } from './admission.js';
