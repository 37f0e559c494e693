import { isJsonObject, type UserInfo } from '@skiff/api';
import { AUTHENTICATED_GROUP, CLOCK_SKEW_SECONDS, EXTRA, KUBERNETES_CLAIM, SERVICE_ACCOUNT_USER_PREFIX, SERVICE_ACCOUNTS_GROUP } from './names.js';

/** An object a token is bound to, by name and uid. */
export interface ObjectRef {
  name: string;
  uid: string;
}

/** The private claim: where the account lives and what the token is bound to. */
export interface KubernetesClaim {
  namespace: string;
  serviceaccount: ObjectRef;
  pod?: ObjectRef;
  secret?: ObjectRef;
  node?: ObjectRef;
}

/** The claims of a service account token (RFC 7519 names, plus Kubernetes' private claim). */
export interface ServiceAccountClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  [KUBERNETES_CLAIM]: KubernetesClaim;
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;
}

export interface ClaimsInput {
  issuer: string;
  audiences: string[];
  /** Seconds since the epoch. */
  now: number;
  expirationSeconds: number;
  jti: string;
  binding: KubernetesClaim;
}

/** The claims of a new token: valid from now for `expirationSeconds`. */
export function serviceAccountClaims(input: ClaimsInput): ServiceAccountClaims {
  const { namespace, serviceaccount } = input.binding;
  return {
    aud: input.audiences,
    exp: input.now + input.expirationSeconds,
    iat: input.now,
    iss: input.issuer,
    jti: input.jti,
    [KUBERNETES_CLAIM]: input.binding,
    nbf: input.now,
    sub: serviceAccountUsername(namespace, serviceaccount.name),
  };
}

export interface ClaimsExpectations {
  issuer: string;
  /** The token must name at least one of them in `aud`. */
  audiences: readonly string[];
  /** Seconds since the epoch. */
  now: number;
}

const isString = (value: unknown): value is string => typeof value === 'string' && value !== '';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

function objectRef(value: unknown): ObjectRef | undefined {
  return isJsonObject(value) && isString(value.name) && isString(value.uid) ? { name: value.name, uid: value.uid } : undefined;
}

/**
 * Checks the claims of a token whose signature was verified: issuer, lifetime, audience, and the private
 * claim's shape (which must agree with `sub`). Answers the typed claims, or why the token is refused.
 */
export function checkClaims(payload: Record<string, unknown>, expect: ClaimsExpectations): { claims: ServiceAccountClaims } | { error: string } {
  if (payload.iss !== expect.issuer) return { error: 'service account token has a different issuer' };
  if (!isNumber(payload.exp)) return { error: 'service account token has no expiry' };
  if (expect.now >= payload.exp) return { error: 'service account token has expired' };
  if (isNumber(payload.nbf) && expect.now + CLOCK_SKEW_SECONDS < payload.nbf) return { error: 'service account token is not valid yet' };
  if (isNumber(payload.iat) && expect.now + CLOCK_SKEW_SECONDS < payload.iat) return { error: 'service account token was issued in the future' };
  const aud = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud.filter(isString) : [];
  if (!aud.some((audience) => expect.audiences.includes(audience)))
    return { error: `service account token audiences ${JSON.stringify(aud)} are not accepted here (want one of ${JSON.stringify(expect.audiences)})` };
  const claim = isJsonObject(payload[KUBERNETES_CLAIM]) ? payload[KUBERNETES_CLAIM] : undefined;
  const serviceaccount = objectRef(claim?.serviceaccount);
  if (!claim || !isString(claim.namespace) || !serviceaccount) return { error: `service account token has no valid "${KUBERNETES_CLAIM}" claim` };
  if (payload.sub !== serviceAccountUsername(claim.namespace, serviceaccount.name)) return { error: 'service account token subject does not match its claims' };
  const binding: KubernetesClaim = { namespace: claim.namespace, serviceaccount };
  for (const kind of ['pod', 'secret', 'node'] as const) {
    if (claim[kind] === undefined) continue;
    const ref = objectRef(claim[kind]);
    if (!ref) return { error: `service account token has a malformed ${kind} binding` };
    binding[kind] = ref;
  }
  return {
    claims: {
      iss: payload.iss,
      sub: payload.sub,
      aud,
      exp: payload.exp,
      iat: isNumber(payload.iat) ? payload.iat : 0,
      nbf: isNumber(payload.nbf) ? payload.nbf : 0,
      jti: isString(payload.jti) ? payload.jti : '',
      [KUBERNETES_CLAIM]: binding,
    },
  };
}

/**
 * Who a valid token authenticates as: `system:serviceaccount:<ns>:<name>` with the account's uid, in the
 * service account groups, with the bound pod and node (and the token's id) in `extra`, as Kubernetes does.
 */
export function serviceAccountUser(claims: ServiceAccountClaims): UserInfo {
  const { namespace, serviceaccount, pod, node } = claims[KUBERNETES_CLAIM];
  const extra: Record<string, string[]> = {};
  if (pod) Object.assign(extra, { [EXTRA.POD_NAME]: [pod.name], [EXTRA.POD_UID]: [pod.uid] });
  if (node) Object.assign(extra, { [EXTRA.NODE_NAME]: [node.name], [EXTRA.NODE_UID]: [node.uid] });
  if (claims.jti) extra[EXTRA.CREDENTIAL_ID] = [`JTI=${claims.jti}`];
  return {
    username: serviceAccountUsername(namespace, serviceaccount.name),
    uid: serviceaccount.uid,
    groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`, AUTHENTICATED_GROUP],
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}
