import { RESOURCES, type KubeObject } from '@skiff/api';
import type { TokenAuthentication } from '@skiff/kernel';
import { checkClaims, serviceAccountUser, type KubernetesClaim, type ObjectRef } from './claims.js';
import { decodeJwt, verifyJwt } from './jwt.js';
import type { SigningKey } from './keys.js';
import type { ObjectGetter } from './lookup.js';
import { CLOCK_SKEW_SECONDS, KUBERNETES_CLAIM } from './names.js';

export interface TokenAuthenticatorOptions {
  issuer: string;
  /** Tokens must be meant for one of these (`aud`). */
  audiences: readonly string[];
  /** Keys whose signatures are accepted. */
  keys: readonly SigningKey[];
  get: ObjectGetter;
  /** Milliseconds since the epoch. */
  now?: () => number;
}

/**
 * Why a bound object no longer vouches for the token: gone, replaced by another of the same name (a new
 * uid), or deleted longer ago than the clock skew allows (a pod finishing its graceful deletion keeps its token).
 */
function staleReason(what: string, name: string, object: KubeObject | undefined, ref: ObjectRef, now: number): string | undefined {
  if (!object) return `${what} ${name} has been deleted`;
  if (object.metadata.uid !== ref.uid) return `${what} ${name} has been deleted and created again (uid ${object.metadata.uid}, the token's ${ref.uid})`;
  const deletion = object.metadata.deletionTimestamp ? Date.parse(object.metadata.deletionTimestamp) / 1000 : undefined;
  if (deletion !== undefined && deletion + CLOCK_SKEW_SECONDS < now) return `${what} ${name} is being deleted`;
  return undefined;
}

/** The first reason the objects a token names no longer vouch for it, or undefined when they all do. */
async function staleBinding(binding: KubernetesClaim, get: ObjectGetter, now: number): Promise<string | undefined> {
  const { namespace, serviceaccount, pod, secret, node } = binding;
  const checks: [string, string, Promise<KubeObject | undefined>, ObjectRef][] = [
    ['service account', `${namespace}/${serviceaccount.name}`, get(RESOURCES.serviceaccounts, namespace, serviceaccount.name), serviceaccount],
  ];
  if (pod) checks.push(['pod', `${namespace}/${pod.name}`, get(RESOURCES.pods, namespace, pod.name), pod]);
  if (secret) checks.push(['secret', `${namespace}/${secret.name}`, get(RESOURCES.secrets, namespace, secret.name), secret]);
  if (node) checks.push(['node', node.name, get(RESOURCES.nodes, '', node.name), node]);
  for (const [what, name, object, ref] of checks) {
    const reason = staleReason(what, name, await object, ref, now);
    if (reason) return reason;
  }
  return undefined;
}

/** Accepts the service account tokens this cluster issued while their claims and the objects they name hold. */
export class ServiceAccountTokenAuthenticator {
  private readonly now: () => number;

  constructor(private readonly options: TokenAuthenticatorOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Undefined for a bearer token that is not a JWT from this issuer (another authenticator may know it);
   * otherwise the user, or why the token is refused.
   */
  async authenticate(token: string): Promise<TokenAuthentication | undefined> {
    const decoded = decodeJwt(token);
    if (!decoded || decoded.payload.iss !== this.options.issuer) return undefined;
    if (!verifyJwt(decoded, this.options.keys)) return { error: 'service account token signature is invalid' };
    const now = Math.floor(this.now() / 1000);
    const checked = checkClaims(decoded.payload, { issuer: this.options.issuer, audiences: this.options.audiences, now });
    if ('error' in checked) return checked;
    const stale = await staleBinding(checked.claims[KUBERNETES_CLAIM], this.options.get, now);
    if (stale) return { error: `service account token is no longer valid: ${stale}` };
    return { user: serviceAccountUser(checked.claims) };
  }
}
