import { randomUUID } from 'node:crypto';
import { errors, isJsonObject, RESOURCES, type Pod, type StatusCause } from '@skiff/api';
import type { ExtensionHandler, ExtensionRequest } from '@skiff/apiserver';
import { serviceAccountClaims, type KubernetesClaim } from './claims.js';
import { signJwt } from './jwt.js';
import type { SigningKey } from './keys.js';
import type { ObjectGetter } from './lookup.js';
import { DEFAULT_EXPIRATION_SECONDS, MAX_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS, TOKEN_REQUEST_API_VERSION, TOKEN_REQUEST_GROUP } from './names.js';

export interface TokenIssuerOptions {
  issuer: string;
  /** The audiences of a token whose request names none: the API server's own. */
  audiences: readonly string[];
  key: SigningKey;
  /** Longer requests get this lifetime instead (the response says so). */
  maxExpirationSeconds?: number;
  get: ObjectGetter;
  /** Milliseconds since the epoch. */
  now?: () => number;
}

export interface BoundObjectReference {
  kind?: string;
  apiVersion?: string;
  name?: string;
  uid?: string;
}

interface TokenRequestSpec {
  audiences: string[];
  expirationSeconds: number;
  boundObjectRef?: BoundObjectReference;
}

const BINDABLE: Record<string, { resource: { group: string; resource: string }; namespaced: boolean }> = {
  Pod: { resource: RESOURCES.pods, namespaced: true },
  Secret: { resource: RESOURCES.secrets, namespaced: true },
  Node: { resource: RESOURCES.nodes, namespaced: false },
};

const invalid = (field: string, value: unknown, detail: string): StatusCause => ({
  type: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
});

/** The request's spec with the API's defaults, or a 400/422 naming what is wrong. */
function readSpec(body: unknown, name: string, defaultAudiences: readonly string[]): TokenRequestSpec {
  if (!isJsonObject(body)) throw errors.badRequest('the request body must be a TokenRequest object');
  if (body.kind !== undefined && body.kind !== 'TokenRequest') throw errors.badRequest(`expected a TokenRequest, got kind ${JSON.stringify(body.kind)}`);
  const spec = isJsonObject(body.spec) ? body.spec : {};
  const causes: StatusCause[] = [];
  const { audiences = [], expirationSeconds = DEFAULT_EXPIRATION_SECONDS, boundObjectRef } = spec;
  if (!Array.isArray(audiences) || !audiences.every((audience) => typeof audience === 'string' && audience !== ''))
    causes.push(invalid('spec.audiences', audiences, 'must be a list of non-empty strings'));
  if (typeof expirationSeconds !== 'number' || !Number.isInteger(expirationSeconds))
    causes.push(invalid('spec.expirationSeconds', expirationSeconds, 'must be an integer'));
  else if (expirationSeconds < MIN_EXPIRATION_SECONDS)
    causes.push(invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes'));
  else if (expirationSeconds > MAX_EXPIRATION_SECONDS)
    causes.push(invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
  if (boundObjectRef !== undefined && boundObjectRef !== null && !isJsonObject(boundObjectRef))
    causes.push(invalid('spec.boundObjectRef', boundObjectRef, 'must be an object reference'));
  if (causes.length > 0) throw errors.invalid('TokenRequest', TOKEN_REQUEST_GROUP, name, causes);
  return {
    audiences: (audiences as string[]).length > 0 ? (audiences as string[]) : [...defaultAudiences],
    expirationSeconds: expirationSeconds as number,
    ...(isJsonObject(boundObjectRef) ? { boundObjectRef: boundObjectRef as BoundObjectReference } : {}),
  };
}

/**
 * Adds what a token is bound to: a Pod (which must run as this account; its node comes along), a Secret
 * or a Node, each by name and checked against the uid the request gives.
 */
async function bind(binding: KubernetesClaim, ref: BoundObjectReference, get: ObjectGetter): Promise<BoundObjectReference> {
  const { namespace, serviceaccount } = binding;
  const kind = ref.kind ?? '';
  const apiVersion = ref.apiVersion ?? 'v1';
  const bindable = apiVersion === 'v1' ? BINDABLE[kind] : undefined;
  if (!bindable) throw errors.badRequest(`cannot bind token to object of type ${apiVersion.includes('/') ? apiVersion : `/${apiVersion}`}, Kind=${kind}`);
  const name = ref.name ?? '';
  if (!name)
    throw errors.invalid('TokenRequest', TOKEN_REQUEST_GROUP, serviceaccount.name, [invalid('spec.boundObjectRef.name', name, 'must name the object')]);
  const object = await get(bindable.resource, bindable.namespaced ? namespace : '', name);
  if (!object) throw errors.notFound(bindable.resource.resource, '', name);
  const uid = object.metadata.uid ?? '';
  if (ref.uid && ref.uid !== uid)
    throw errors.conflict(
      kind,
      '',
      name,
      `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  if (kind === 'Pod') {
    // Read at RESOURCES.pods, so a Pod.
    const { spec } = object as Pod;
    if ((spec?.serviceAccountName || 'default') !== serviceaccount.name)
      throw errors.badRequest(`cannot bind token for serviceaccount "${serviceaccount.name}" to pod running with different serviceaccount name.`);
    binding.pod = { name, uid };
    const node = spec?.nodeName ? await get(RESOURCES.nodes, '', spec.nodeName) : undefined;
    if (node?.metadata.uid) binding.node = { name: spec.nodeName!, uid: node.metadata.uid };
  } else if (kind === 'Secret') binding.secret = { name, uid };
  else binding.node = { name, uid };
  return { kind, apiVersion, name, uid };
}

/**
 * POST serviceaccounts/<name>/token (TokenRequest, `kubectl create token`): a signed token for an existing
 * account, for the requested audiences and lifetime, optionally bound to a Pod, Secret or Node so that it
 * stops working when that object goes. A dry run answers without a token.
 */
export function tokenRequestHandler(options: TokenIssuerOptions): ExtensionHandler {
  const now = options.now ?? Date.now;
  return async (request: ExtensionRequest) => {
    const { namespace, name } = request;
    const spec = readSpec(request.body, name, options.audiences);
    const account = await options.get(RESOURCES.serviceaccounts, namespace, name);
    if (!account) throw errors.notFound(RESOURCES.serviceaccounts.resource, '', name);
    const binding: KubernetesClaim = { namespace, serviceaccount: { name, uid: account.metadata.uid ?? '' } };
    const boundObjectRef = spec.boundObjectRef ? await bind(binding, spec.boundObjectRef, options.get) : undefined;
    const expirationSeconds = Math.min(spec.expirationSeconds, options.maxExpirationSeconds ?? Infinity);
    const issuedAt = Math.floor(now() / 1000);
    const claims = serviceAccountClaims({ issuer: options.issuer, audiences: spec.audiences, now: issuedAt, expirationSeconds, jti: randomUUID(), binding });
    return {
      status: 201,
      body: {
        kind: 'TokenRequest',
        apiVersion: TOKEN_REQUEST_API_VERSION,
        metadata: { name, namespace, creationTimestamp: null },
        spec: { audiences: spec.audiences, expirationSeconds, boundObjectRef: boundObjectRef ?? null },
        status: {
          token: request.dryRun ? '' : signJwt(claims, options.key),
          expirationTimestamp: new Date(claims.exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        },
      },
    };
  };
}
