import { AsyncSeriesBailHook, AsyncSeriesHook, SyncHook, SyncWaterfallHook } from 'tapable';
import type { AwilixContainer } from 'awilix';
import type { Node, Pod } from '@skiff/api';
import type { ResolvedConfig } from './config.js';
import type {
  AdmissionRequest,
  AuditEvent,
  AuthnRequest,
  AuthnResult,
  AuthzAttributes,
  AuthzDecision,
  RulesRequest,
  FlowControlRequest,
  FlowControlResult,
  InitializerRegistry,
  ResourceRegistry,
} from './types/apiserver.js';
import type { ControllerRegistry } from './types/controllers.js';
import type { SchedulerPluginRegistry } from './types/scheduler.js';
import type { NamedRegistry, NetworkFactory, PodAdmitResult, PodSyncContext, RuntimeFactory, ServiceProxyFactory, VolumePlugin } from './types/kubelet.js';

/**
 * The hook catalogue: every extension point of a Skiff cluster, in one frozen object.
 * Plugins tap these; they never add or replace hooks. docs/hooks.md carries the reference table, and
 * hooks-page.test.ts checks it against this file: a hook added, changed or removed here changes the page too.
 */
export function createHooks() {
  return Object.freeze({
    // ---- kernel lifecycle -------------------------------------------------------------------------
    /** Adjust the resolved config before components are built. Called once, after every plugin applied. */
    configure: new SyncWaterfallHook<[ResolvedConfig]>(['config']),
    /** Register or replace shared components in the DI container. */
    components: new SyncHook<[AwilixContainer]>(['container']),
    /** Start components, in stage order (see LIFECYCLE_STAGE). */
    start: new AsyncSeriesHook<[]>([]),
    /** Everything started: announce, write files, begin serving traffic. */
    ready: new AsyncSeriesHook<[]>([]),
    /** Stop components; taps use the negated start stage so stopping runs in reverse. */
    stop: new AsyncSeriesHook<[]>([]),

    // ---- API server ---------------------------------------------------------------------------------
    /** Register the kinds the API server serves. */
    resources: new SyncHook<[ResourceRegistry]>(['registry']),
    /** Authentication chain: the first tap that returns a user wins. */
    authenticate: new AsyncSeriesBailHook<[AuthnRequest], AuthnResult>(['request']),
    /**
     * Flow control, after authentication and before authorization: the first tap that returns a grant decides, and
     * the API server releases it when the answer is complete; a tap throws a 429 to refuse. No tap: no flow control.
     */
    flowControl: new AsyncSeriesBailHook<[FlowControlRequest], FlowControlResult>(['request']),
    /** Authorization chain: the first allow or deny decides; no decision → 403. */
    authorize: new AsyncSeriesBailHook<[AuthzAttributes], AuthzDecision>(['attributes']),
    /** What a user may do in a namespace, for SelfSubjectRulesReview (`kubectl auth can-i --list`): taps add their rules. */
    authorizationRules: new AsyncSeriesHook<[RulesRequest]>(['request']),
    /** Mutating admission, in stage order: taps may change `request.object`; throw AdmissionError to reject. */
    mutate: new AsyncSeriesHook<[AdmissionRequest]>(['request']),
    /** Validating admission: the object is frozen; taps may only reject. */
    validate: new AsyncSeriesHook<[AdmissionRequest]>(['request']),
    /** Name initializers per resource. */
    initializers: new SyncHook<[InitializerRegistry]>(['registry']),
    /** Observe every request stage; taps must not block (hand off to an async sink). */
    audit: new SyncHook<[AuditEvent]>(['event']),

    // ---- controller manager -------------------------------------------------------------------------
    /** Register control loops. */
    controllers: new SyncHook<[ControllerRegistry]>(['registry']),

    // ---- scheduler ----------------------------------------------------------------------------------
    /** Register scheduler framework plugins (filter, score, bind…). */
    schedulerPlugins: new SyncHook<[SchedulerPluginRegistry]>(['registry']),

    // ---- kubelet ------------------------------------------------------------------------------------
    /** Register container runtimes (CRI) by name. */
    runtimes: new SyncHook<[NamedRegistry<RuntimeFactory>]>(['registry']),
    /** Register pod networks (CNI) by name. */
    networks: new SyncHook<[NamedRegistry<NetworkFactory>]>(['registry']),
    /** Register service proxies (kube-proxy's place) by name. */
    serviceProxies: new SyncHook<[NamedRegistry<ServiceProxyFactory>]>(['registry']),
    /** Register volume plugins by name. */
    volumes: new SyncHook<[NamedRegistry<VolumePlugin>]>(['registry']),
    /** Node-level admission before a pod starts: the first rejection wins. */
    podAdmit: new AsyncSeriesBailHook<[Pod, Node], PodAdmitResult>(['pod', 'node']),
    /** Runs on every pass of a pod worker, after the pod's containers are synced. */
    podSync: new AsyncSeriesHook<[PodSyncContext]>(['context']),
  });
}

export type Hooks = ReturnType<typeof createHooks>;

/** Start stages for components; stop runs with the negated stage, so in reverse. */
export const LIFECYCLE_STAGE = Object.freeze({
  STORE: -300,
  API_SERVER: -200,
  CONTROLLER_MANAGER: 0,
  SCHEDULER: 100,
  KUBELET: 200,
});

/** Admission stages: taps pass `{ name, stage }` so order never depends on load order. */
export const ADMISSION_STAGE = Object.freeze({
  DEFAULTS: -100,
  NAMESPACE: 0,
  SERVICE_ACCOUNT: 100,
  LIMITS: 500,
  QUOTA: 900,
});

/** Stages of the authenticate chain (the authorize chain has its own, AUTHORIZE_STAGE). */
export const CHAIN_STAGE = Object.freeze({
  LOOPBACK: -1000,
  CERTIFICATE: -100,
  TOKEN: 0,
  ANONYMOUS: 1000,
});

/**
 * Stages of the authorize chain: the API server's own privileged-group check first (system:masters
 * may do anything, as in kube-apiserver), then authorizers at the default stage (a deny there still
 * beats the public-info allow), then public info, then catch-alls.
 */
export const AUTHORIZE_STAGE = Object.freeze({
  PRIVILEGED_GROUPS: -1000,
  DEFAULT: 0,
  PUBLIC_INFO: 900,
  CATCH_ALL: 1000,
});
