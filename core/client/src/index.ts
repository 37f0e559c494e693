export { createClient, type PatchOptions, type SkiffClient } from './client.js';
export { createLoopbackClient, createClientFromKubeconfig, type KubeconfigClient, type KubeconfigClientOptions } from './connect.js';
export {
  LoopbackTransport,
  PortTransport,
  servePortTransport,
  HttpsTransport,
  isWatchRequest,
  type HttpsTransportOptions,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport/index.js';
export { readKubeconfig, parseKubeconfig, buildKubeconfig, writeKubeconfig, type KubeconfigConnection, type KubeconfigSpec } from './kubeconfig.js';
export { SharedInformer, type InformerScope, type InformerSettings } from './informer.js';
export { SharedInformerFactory, type SharedInformerFactoryOptions } from './factory.js';
export { NAMESPACE_INDEX, type Indexer } from './cache.js';
export { WorkQueue, runWorkers, objectKey, splitObjectKey, type WorkQueueOptions, type RunWorkersOptions } from './workqueue.js';
export { EventRecorderImpl, type EventRecorderOptions } from './recorder.js';
export { ClientError, CLIENT_ERRORS, type ClientErrorCode } from './errors.js';
export { canI, assertCanI, type AccessQuestion } from './access.js';
export { sleep } from './abortable.js';
export { postWebhook, type WebhookPostOptions } from './webhook-post.js';
export { certificateFailure } from './dial-errors.js';
export { drained, endSoon, readUpTo, splice } from './relay.js';
export { LeaderElector, LEADER_ELECTION_DEFAULTS, type LeaderCallbacks, type LeaderElectorOptions } from './leader-election.js';
export {
  leaderElectionOptionsSchema,
  leaderElectionOptionsProblem,
  runWhileLeading,
  type LeaderElectionOptions,
  type LeaderWork,
} from './leader-election-options.js';
