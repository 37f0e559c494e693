import type { JWTPayload } from 'jose';
import type { UserInfo } from '@skiff/api';
import type { ClaimMapping } from './config.js';

/** Every authenticated user is in this group, whoever vouched for them. */
export const AUTHENTICATED_GROUP = 'system:authenticated';

export type ClaimsOutcome = { user: UserInfo } | { error: string };

function stringClaim(payload: JWTPayload, claim: string): string | { error: string } {
  const value = payload[claim];
  if (value === undefined) return { error: `oidc: claim "${claim}" not present` };
  if (typeof value !== 'string') return { error: `oidc: claim "${claim}" is not a string` };
  return value;
}

/** A groups claim may hold one string or a list of them. */
function groupsClaim(payload: JWTPayload, claim: string): string[] | { error: string } {
  const value = payload[claim];
  if (value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((group) => typeof group === 'string')) return value as string[];
  return { error: `oidc: claim "${claim}" is neither a string nor a list of strings` };
}

/**
 * The user a verified token's claims name, by the issuer's mapping: the required claims first, then the username
 * (an `email` claim only when `email_verified` is not false), groups and uid, with their prefixes.
 */
export function userFromClaims(payload: JWTPayload, mapping: ClaimMapping): ClaimsOutcome {
  for (const { claim, value } of mapping.required) {
    const got = payload[claim];
    if (got === undefined) return { error: `oidc: required claim "${claim}" not present` };
    if (got !== value) return { error: `oidc: required claim "${claim}" value does not match: got ${JSON.stringify(got)}, want ${JSON.stringify(value)}` };
  }
  const username = stringClaim(payload, mapping.username.claim);
  if (typeof username !== 'string') return username;
  if (!username) return { error: `oidc: claim "${mapping.username.claim}" is empty` };
  if (mapping.username.claim === 'email' && payload.email_verified !== undefined) {
    if (typeof payload.email_verified !== 'boolean') return { error: 'oidc: claim "email_verified" is not a boolean' };
    if (!payload.email_verified) return { error: 'oidc: email not verified' };
  }
  const user: UserInfo = { username: mapping.username.prefix + username, groups: [] };
  if (mapping.groups) {
    const groups = groupsClaim(payload, mapping.groups.claim);
    if (!Array.isArray(groups)) return groups;
    user.groups = groups.map((group) => mapping.groups!.prefix + group);
  }
  if (mapping.uid) {
    const uid = stringClaim(payload, mapping.uid.claim);
    if (typeof uid !== 'string') return uid;
    user.uid = uid;
  }
  if (!user.groups.includes(AUTHENTICATED_GROUP)) user.groups.push(AUTHENTICATED_GROUP);
  return { user };
}
