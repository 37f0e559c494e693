import { errorMessage, RESOURCES, type Pod, type ServiceAccountTokenProjection } from '@skiff/api';
import type { VolumeContext } from '@skiff/kernel';
import { VolumeError } from './errors.js';
import { DEFAULT_TOKEN_EXPIRATION_SECONDS, TOKEN_MAX_AGE_MS, TOKEN_REFRESH_FRACTION } from './names.js';

interface IssuedToken {
  token: string;
  issuedAt: number;
  expiresAt: number;
}

interface TokenRequestResponse {
  status?: { token?: string; expirationTimestamp?: string };
}

/**
 * Tokens for pods' projected volumes, from the TokenRequest API (`serviceaccounts/<name>/token`), bound to the
 * pod. A token is kept and handed out again until 80% of its lifetime (or a day) has passed, as Kubernetes'
 * token manager does, so a resync does not ask for a new one each time.
 */
export class ServiceAccountTokens {
  private readonly tokens = new Map<string, IssuedToken>();

  constructor(private readonly now: () => number = Date.now) {}

  async token(context: VolumeContext, pod: Pod, projection: ServiceAccountTokenProjection): Promise<string> {
    const { namespace, name, uid } = pod.metadata as { namespace: string; name: string; uid: string };
    const account = pod.spec.serviceAccountName || 'default';
    const expirationSeconds = projection.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS;
    const key = `${uid}/${account}/${projection.audience ?? ''}/${expirationSeconds}`;
    const held = this.tokens.get(key);
    const now = this.now();
    if (held && !this.needsRefresh(held, now)) return held.token;

    let response: TokenRequestResponse;
    try {
      response = await context.client.createSubresource<TokenRequestResponse>(RESOURCES.serviceaccounts, account, namespace, 'token', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          audiences: projection.audience ? [projection.audience] : [],
          expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid },
        },
      });
    } catch (err) {
      // A token that is still valid beats none while the API is unreachable.
      if (held && held.expiresAt > now) return held.token;
      throw new VolumeError('SKIFF_ERR_VOLUME_TOKEN', { detail: errorMessage(err) }, { cause: err });
    }
    const token = response.status?.token;
    if (!token) throw new VolumeError('SKIFF_ERR_VOLUME_TOKEN', { detail: 'the TokenRequest answer has no token' });
    const expiresAt = Date.parse(response.status?.expirationTimestamp ?? '') || now + expirationSeconds * 1000;
    this.tokens.set(key, { token, issuedAt: now, expiresAt });
    return token;
  }

  /** Forgets the tokens of a pod that is gone. */
  forget(podUid: string): void {
    for (const key of this.tokens.keys()) if (key.startsWith(`${podUid}/`)) this.tokens.delete(key);
  }

  private needsRefresh(held: IssuedToken, now: number): boolean {
    const lifetime = held.expiresAt - held.issuedAt;
    return now >= held.issuedAt + lifetime * TOKEN_REFRESH_FRACTION || now - held.issuedAt > TOKEN_MAX_AGE_MS;
  }
}
