import { errors, type UserInfo } from '@skiff/api';
import type { AuthzAttributes, Hooks } from '@skiff/kernel';
import { authorize } from './authorize.js';

const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';

const AUTHENTICATION_GROUP = 'authentication.k8s.io';
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const ANONYMOUS = 'system:anonymous';
const AUTHENTICATED_GROUP = 'system:authenticated';
const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

/** One thing a request asks to act as, and the `impersonate` permission it takes. */
type Impersonation = Pick<AuthzAttributes, 'apiGroup' | 'apiVersion' | 'resource' | 'subresource' | 'namespace' | 'name'>;

/**
 * Whom the request acts as. Without impersonation headers, the authenticated user itself. With them, every
 * part asked for (the user or ServiceAccount, each group, each extra value, the uid) must be allowed by the
 * authorize chain as verb `impersonate` for the authenticated user, in that order; the first refusal is a 403.
 * The impersonated user is in system:authenticated (system:unauthenticated for system:anonymous); it has the
 * groups the headers name and no others, except a ServiceAccount named without groups, which gets its fixed ones.
 */
export async function impersonate(hooks: Hooks, headers: Record<string, string | undefined>, requester: UserInfo): Promise<UserInfo> {
  // Empty headers count as absent, as in kube-apiserver.
  const username = headers[USER_HEADER] || undefined;
  const groups = listHeader(headers[GROUP_HEADER]);
  const uid = headers[UID_HEADER] || undefined;
  const extra = extraHeaders(headers);
  if (username === undefined) {
    if (groups === undefined && uid === undefined && extra === undefined) return requester;
    const asked = [groups && 'groups', uid !== undefined && 'uid', extra && 'extra'].filter(Boolean).join(', ');
    throw errors.badRequest(`requested impersonation of ${asked} without impersonating a user`);
  }

  const serviceAccount = serviceAccountOf(username);
  const checks: Impersonation[] = [
    serviceAccount
      ? { ...{}, ...CORE, resource: 'serviceaccounts', namespace: serviceAccount.namespace, name: serviceAccount.name }
      : { ...{}, ...CORE, resource: 'users', name: username },
    ...(groups ?? []).map((group) => ({ ...{}, ...CORE, resource: 'groups', name: group })),
    ...Object.entries(extra ?? {}).flatMap(([key, values]) =>
      values.map((value) => ({ ...{}, ...AUTHENTICATION, resource: 'userextras', subresource: key, name: value })),
    ),
    ...(uid !== undefined ? [{ ...{}, ...AUTHENTICATION, resource: 'uids', name: uid }] : []),
  ];
  for (const check of checks) {
    await authorize(hooks, { user: requester, verb: 'impersonate', isResourceRequest: true, path: '', ...check });
  }

  let impersonatedGroups = groups ?? [];
  if (serviceAccount && groups === undefined) impersonatedGroups = ['system:serviceaccounts', `system:serviceaccounts:${serviceAccount.namespace}`];
  const implied = username === ANONYMOUS ? UNAUTHENTICATED_GROUP : AUTHENTICATED_GROUP;
  if (!impersonatedGroups.includes(implied)) impersonatedGroups = [...impersonatedGroups, implied];
  return { username, ...(uid !== undefined ? { uid } : {}), groups: impersonatedGroups, ...(extra ? { extra } : {}) };
}

const CORE = { apiGroup: '', apiVersion: 'v1', subresource: '', namespace: '', name: '' } as const;
const AUTHENTICATION = { apiGroup: AUTHENTICATION_GROUP, apiVersion: 'v1', subresource: '', namespace: '', name: '' } as const;

/**
 * A header's values. Transports join a repeated header into one value with ", " (RFC 9110), so the values come
 * back by splitting there: a group name that itself holds ", " cannot be impersonated.
 */
function listHeader(value: string | undefined): string[] | undefined {
  const values = value?.split(/,\s*/).filter((part) => part !== '');
  return values?.length ? values : undefined;
}

/** `Impersonate-Extra-<key>` headers: keys are lower-case and percent-decoded (kubectl encodes them so). */
function extraHeaders(headers: Record<string, string | undefined>): Record<string, string[]> | undefined {
  let extra: Record<string, string[]> | undefined;
  for (const name in headers) {
    if (!name.startsWith(EXTRA_PREFIX)) continue;
    const values = listHeader(headers[name]);
    if (!values) continue;
    let key: string;
    try {
      key = decodeURIComponent(name.slice(EXTRA_PREFIX.length)).toLowerCase();
    } catch {
      throw errors.badRequest(`the header ${name} is not a valid percent-encoded extra key`);
    }
    extra ??= {};
    extra[key] = [...(extra[key] ?? []), ...values];
  }
  return extra;
}

/** The namespace and name of `system:serviceaccount:<namespace>:<name>`, or undefined for any other user. */
function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}
