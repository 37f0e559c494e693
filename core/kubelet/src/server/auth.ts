import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TLSSocket } from 'node:tls';
import { RESOURCES, type SubjectAccessReview, type TokenReview, type UserInfo } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { ExpiringCache } from './expiring-cache.js';

const AUTHENTICATED_GROUP = 'system:authenticated';

/**
 * How long review answers are kept. The defaults follow upstream's kubelet: its webhook authentication cache
 * (2 minutes) and webhook authorization caches (5 minutes allowed, 30 seconds denied); a refused token is kept
 * only 10 seconds, so a token that becomes valid (a new service account token) works soon.
 */
export interface KubeletAuthCacheTtls {
  authenticatedMs: number;
  unauthenticatedMs: number;
  authorizedMs: number;
  unauthorizedMs: number;
}

export const KUBELET_AUTH_CACHE_DEFAULTS: Readonly<KubeletAuthCacheTtls> = Object.freeze({
  authenticatedMs: 2 * 60_000,
  unauthenticatedMs: 10_000,
  authorizedMs: 5 * 60_000,
  unauthorizedMs: 30_000,
});

/** What a request to the kubelet is asked about: a verb on the node object's subresource, as upstream's kubelet asks. */
export interface KubeletAccess {
  verb: string;
  resource: 'nodes';
  subresource: string;
  name: string;
}

/** Upstream's kubelet's paths with their own subresource; a path is one of them when it is it or lies below it. */
const SUBRESOURCE_PATHS: readonly [string, string][] = [
  ['/stats', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs', 'log'],
  ['/spec', 'spec'],
];

/** The nodes subresource a kubelet path is authorized as: stats, metrics, log, spec, or proxy for everything else. */
export function kubeletSubresource(path: string): string {
  for (const [prefix, subresource] of SUBRESOURCE_PATHS) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return subresource;
  }
  return 'proxy';
}

const VERBS: Readonly<Record<string, string>> = Object.freeze({ GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' });

/** The API verb of an HTTP method, as upstream's kubelet maps them (any other method is asked about by its own name). */
export function kubeletVerb(method: string): string {
  const upper = method.toUpperCase();
  return VERBS[upper] ?? upper.toLowerCase();
}

export function kubeletAccess(nodeName: string, method: string, path: string): KubeletAccess {
  return { verb: kubeletVerb(method), resource: 'nodes', subresource: kubeletSubresource(path), name: nodeName };
}

/** Upstream's kubelet's 403 text. */
export function forbiddenMessage(user: UserInfo, access: KubeletAccess): string {
  return `Forbidden (user=${user.username}, verb=${access.verb}, resource=${access.resource}, subresource=${access.subresource})`;
}

/** Upstream's kubelet's text when the authorizer could not answer. */
export function authorizationErrorMessage(user: UserInfo, access: KubeletAccess): string {
  return `Authorization error (user=${user.username}, verb=${access.verb}, resource=${access.resource}, subresource=${access.subresource})`;
}

export interface KubeletAuthOptions {
  /** Asks the API server: TokenReview for bearer tokens, SubjectAccessReview for every request. */
  client: Pick<ApiClient, 'create'>;
  cacheTtls?: Partial<KubeletAuthCacheTtls>;
  /** The clock, for tests. */
  now?: () => number;
}

/**
 * The kubelet's delegated authentication and authorization, as upstream's kubelet does it: a client certificate
 * that the TLS layer verified against the client CA names the user (CN) and groups (O); else a bearer token is
 * reviewed by the API server (TokenReview). Every request is then authorized by the API server
 * (SubjectAccessReview). Answers are cached briefly; failures to ask are not cached.
 */
export class KubeletAuth {
  private readonly ttls: KubeletAuthCacheTtls;
  private readonly tokens: ExpiringCache<UserInfo | null>;
  private readonly decisions: ExpiringCache<boolean>;
  private readonly certificateUsers = new WeakMap<TLSSocket, UserInfo | null>();

  constructor(private readonly options: KubeletAuthOptions) {
    this.ttls = { ...{}, ...KUBELET_AUTH_CACHE_DEFAULTS, ...options.cacheTtls };
    this.tokens = new ExpiringCache(4096, options.now);
    this.decisions = new ExpiringCache(4096, options.now);
  }

  /** The user the request authenticates as; undefined for none (a 401). Rejects when the token could not be reviewed. */
  async authenticate(request: IncomingMessage): Promise<UserInfo | undefined> {
    const byCertificate = this.certificateUser(request);
    if (byCertificate) return byCertificate;
    const token = bearerToken(request.headers.authorization);
    return token ? this.reviewToken(token) : undefined;
  }

  /** Whether the user may make the access; rejects when the API server could not be asked. */
  async authorize(user: UserInfo, access: KubeletAccess): Promise<boolean> {
    const spec = {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      ...(user.extra ? { extra: user.extra } : {}),
      resourceAttributes: { verb: access.verb, group: '', version: 'v1', resource: access.resource, subresource: access.subresource, name: access.name },
    };
    const key = JSON.stringify(spec);
    const known = this.decisions.get(key);
    if (known !== undefined) return known;
    const review = await this.options.client.create<SubjectAccessReview>(RESOURCES.subjectaccessreviews, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {},
      spec,
    });
    const allowed = review.status?.allowed === true && review.status.denied !== true;
    this.decisions.set(key, allowed, allowed ? this.ttls.authorizedMs : this.ttls.unauthorizedMs);
    return allowed;
  }

  /** The verified client certificate's user, read once per connection. */
  private certificateUser(request: IncomingMessage): UserInfo | undefined {
    const socket = request.socket;
    if (!(socket instanceof TLSSocket)) return undefined;
    let user = this.certificateUsers.get(socket);
    if (user === undefined) {
      user = socket.authorized ? userOfCertificate(socket) : null;
      this.certificateUsers.set(socket, user);
    }
    return user ?? undefined;
  }

  private async reviewToken(token: string): Promise<UserInfo | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const known = this.tokens.get(key);
    if (known !== undefined) return known ?? undefined;
    const review = await this.options.client.create<TokenReview>(RESOURCES.tokenreviews, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      metadata: {},
      spec: { token },
    });
    const reviewed = review.status?.authenticated && review.status.user?.username ? review.status.user : undefined;
    const user = reviewed
      ? withAuthenticatedGroup({
          username: reviewed.username!,
          ...(reviewed.uid ? { uid: reviewed.uid } : {}),
          groups: reviewed.groups ?? [],
          ...(reviewed.extra ? { extra: reviewed.extra } : {}),
        })
      : null;
    this.tokens.set(key, user, user ? this.ttls.authenticatedMs : this.ttls.unauthenticatedMs);
    return user ?? undefined;
  }
}

/** `Authorization: Bearer <token>` (the scheme in any case); undefined for anything else. */
function bearerToken(header: string | undefined): string | undefined {
  const match = /^bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/** CN is the user, each O a group (Kubernetes' x509 authenticator). */
function userOfCertificate(socket: TLSSocket): UserInfo | null {
  const subject = socket.getPeerCertificate().subject as Record<string, string | string[] | undefined> | undefined;
  const username = [subject?.CN ?? []].flat()[0];
  if (!username) return null;
  return withAuthenticatedGroup({ username, groups: [subject?.O ?? []].flat() });
}

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  return user.groups.includes(AUTHENTICATED_GROUP) ? user : { ...{}, ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}
