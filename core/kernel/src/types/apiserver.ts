import type { KubeObject, ResourceDefinition, ResourceName, ResourceTypes, StatusCause, UserInfo } from '@skiff/api';
import type { ApiRequest } from './transport.js';

/** What an authenticator sees. Push a message to `errors` to explain a rejection; return nothing to pass. */
export interface AuthnRequest {
  headers: Record<string, string | undefined>;
  remoteAddress?: string;
  peerCertificates?: Buffer[];
  /** Authenticators that recognised but rejected the credentials say why here; aggregated into the 401. */
  errors: string[];
}

export type AuthnResult = { user: UserInfo } | undefined;

export interface AuthzAttributes {
  user: UserInfo;
  /** get, list, watch, create, update, patch, delete, deletecollection; or the HTTP verb for non-resource paths. */
  verb: string;
  isResourceRequest: boolean;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  path: string;
}

export type AuthzDecision = { decision: 'allow' | 'deny'; reason?: string } | undefined;

/** A rule about resources a user may act on, as SelfSubjectRulesReview lists it. */
export interface ResourceRuleInfo {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

/** A rule about non-resource paths a user may request. */
export interface NonResourceRuleInfo {
  verbs: string[];
  nonResourceURLs?: string[];
}

/**
 * What the `authorizationRules` hook fills in: the rules a user has in a namespace (cluster-wide ones included).
 * An authorizer that decides by rules adds them; one that decides otherwise (a webhook) sets `incomplete`.
 */
export interface RulesRequest {
  user: UserInfo;
  namespace: string;
  resourceRules: ResourceRuleInfo[];
  nonResourceRules: NonResourceRuleInfo[];
  /** Some authorizer may allow more than the rules listed. */
  incomplete: boolean;
  /** Why the list may be incomplete. */
  evaluationErrors: string[];
}

/**
 * What flow control (API Priority and Fairness) sees of a request, after authentication and before
 * authorization: who sent it and what it is about (as authorization does), its query, and a way to size the
 * collection a list or watch reads.
 */
export interface FlowControlRequest extends AuthzAttributes {
  /** The query parameters (`limit`, `labelSelector`, `sendInitialEvents`…). */
  query: Record<string, string | undefined>;
  /** Aborted when the client goes away: a request waiting for its turn gives its place up. */
  readonly signal?: AbortSignal;
  /** Headers every answer to this request carries, a refusal included: taps add theirs here. */
  responseHeaders: Record<string, string>;
  /**
   * How many objects the store holds in the collection a resource request names (in its namespace, or in all of
   * them), counted at most about a second ago; undefined for a request that names no served collection.
   */
  objectCount(): Promise<number | undefined>;
}

/**
 * A request's permission to run. The API server calls `release` once, when the answer is complete: after a
 * streamed list's last chunk, and for watches and connection upgrades (long-running) as soon as they start.
 */
export interface FlowControlGrant {
  /** Gives the request's seats back. */
  release(): void;
}

/** A grant, or nothing when this tap does not control the request (the next tap decides; nobody: it runs). */
export type FlowControlResult = FlowControlGrant | undefined;

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/**
 * What admission plugins see. `T` is the object's type; narrow a request to one resource with
 * `isAdmissionFor(request, 'pods')` (or `'deployments.apps'`…) to get `object` typed as a Pod.
 */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  operation: AdmissionOperation;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subresource: string;
  namespace: string;
  name: string;
  /** The incoming object; mutating plugins may change it. Undefined for DELETE. */
  object?: T;
  oldObject?: T;
  user: UserInfo;
  dryRun: boolean;
  /** Read access to stored objects (e.g. the namespace) without going through the pipeline again. */
  get(resource: { group: string; resource: string }, namespace: string, name: string): Promise<KubeObject | undefined>;
  /**
   * Calls `callback` once, when the request has been answered — after the store write, or after a later stage
   * refused it. For taps that set something aside for the object (an allocated address) and must give it back
   * when the object was not written. The API server always provides it; hand-built requests may not.
   */
  onFinished?(callback: (outcome: AdmissionOutcome) => void): void;
  /**
   * Warnings for the client: each goes out in a `Warning: 299` header (kubectl prints them). The API server
   * always provides the list; hand-built requests may not.
   */
  warnings?: string[];
  /**
   * Annotations for this request's audit event (`pod-security.kubernetes.io/audit-violations`…), keyed by a
   * prefix the plugin owns. The API server always provides the record; hand-built requests may not.
   */
  auditAnnotations?: Record<string, string>;
}

/** How a request that passed through admission ended. */
export interface AdmissionOutcome {
  /** The request succeeded (a 2xx answer). */
  succeeded: boolean;
  /** The object the API server answered with, when it succeeded. */
  object?: KubeObject;
}

/**
 * Whether `request` is about `resource` (kubectl's `<plural>` or `<plural>.<group>`, as keyed in
 * @skiff/api's ResourceTypes); narrows `request.object` to that resource's type. Subresource requests
 * (pods/status, pods/binding) carry other kinds of object and do not match.
 */
export function isAdmissionFor<R extends ResourceName>(request: AdmissionRequest, resource: R): request is AdmissionRequest<ResourceTypes[R]> {
  if (request.subresource) return false;
  const dot = resource.indexOf('.');
  const plural = dot < 0 ? resource : resource.slice(0, dot);
  const group = dot < 0 ? '' : resource.slice(dot + 1);
  return request.resource.resource === plural && request.resource.group === group;
}

/** Thrown by admission plugins to reject a request; becomes a Status (default 403 Forbidden). */
export class AdmissionError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 | 404 | 409 | 422 | 429 = 403,
    readonly causes?: StatusCause[],
  ) {
    super(message);
    this.name = 'AdmissionError';
  }
}

export type AuditStage = 'RequestReceived' | 'ResponseComplete' | 'Panic';

export interface AuditEvent {
  auditID: string;
  stage: AuditStage;
  verb: string;
  requestURI: string;
  user?: UserInfo;
  /** Whom the user acted as (Impersonate-User and the other impersonation headers), when they did. */
  impersonatedUser?: UserInfo;
  sourceIPs: string[];
  /** The client's User-Agent header. */
  userAgent?: string;
  objectRef?: { resource: string; namespace?: string; name?: string; apiGroup?: string; apiVersion?: string; subresource?: string };
  responseStatus?: { code: number; reason?: string; message?: string };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  /** The admitted object, for CREATE/UPDATE requests at ResponseComplete. */
  requestObject?: KubeObject;
  /** The answer's body at ResponseComplete (an object or a Status); absent for streamed answers (watches, long lists). */
  responseObject?: unknown;
  /** Annotations admission plugins recorded for this request (at ResponseComplete and Panic only). */
  annotations?: Record<string, string>;
}

// A kind's definition is data about API objects, so it lives in @skiff/api (written with its defineKind).
export type { ResourceDefinition, TableColumn } from '@skiff/api';

export interface ResourceRegistry {
  register(definition: ResourceDefinition): void;
  /** Stops serving one version of a resource (every version when `version` is left out): CRDs removed at run time. */
  unregister(group: string, resource: string, version?: string): void;
  get(group: string, resource: string): ResourceDefinition | undefined;
  byKind(group: string, kind: string): ResourceDefinition | undefined;
  list(): ResourceDefinition[];
}

export interface Initializer {
  /** Unique, dotted: "podimage.example.com". */
  name: string;
  group: string;
  resource: string;
  /**
   * In-process initializers change the object and return; the API server removes their entry.
   * Without `initialize` the entry stays pending until an external controller clears it by update.
   */
  initialize?(object: KubeObject): void | Promise<void>;
}

export interface InitializerRegistry {
  register(initializer: Initializer): void;
  forResource(group: string, resource: string): Initializer[];
}

/** Low-level escape hatch for plugins that serve extra paths (/metrics, /logs). */
export interface RouteDefinition {
  method: ApiRequest['method'];
  path: string;
  handler(request: ApiRequest): Promise<{ status: number; headers?: Record<string, string>; body?: unknown }>;
}
