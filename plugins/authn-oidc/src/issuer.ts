import { createRemoteJWKSet, customFetch, type RemoteJWKSet } from 'jose';
import type { Logger } from '@skiff/kernel';
import type { IssuerConfig } from './config.js';
import { getJson, httpsGet } from './https-get.js';
import { DISCOVERY_RETRY_MS, ISSUER_REQUEST_TIMEOUT_MS, JWKS_COOLDOWN_MS, JWKS_REFRESH_MS, START_WAIT_MS } from './names.js';

export interface IssuerKeysOptions {
  logger?: Logger;
  /** After a fetch, an unknown `kid` fetches again only once this has passed. */
  cooldownMs?: number;
  /** How often the keys are fetched again in the background. */
  refreshMs?: number;
  timeoutMs?: number;
  retryMs?: { first: number; max: number };
  /** How long a start waits for the first discovery before going on without it. */
  startWaitMs?: number;
}

/**
 * An issuer's signing keys: its discovery document names the key set (`jwks_uri`), which jose's remote key set
 * fetches, caches and fetches again when a token names a key it does not know (at most once per cooldown); a
 * timer fetches it again every `refreshMs`, so no request ever waits for the issuer otherwise. Discovery runs at start and,
 * while it fails (the issuer is down, its certificate is not trusted), again in the background with backoff;
 * tokens of the issuer are refused until it succeeds, and the server starts either way.
 */
export class IssuerKeys {
  private jwks: RemoteJWKSet | undefined;
  private problem = 'discovery has not finished yet';
  private retry: NodeJS.Timeout | undefined;
  private refresh: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly timeoutMs: number;

  constructor(
    readonly config: IssuerConfig,
    private readonly options: IssuerKeysOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? ISSUER_REQUEST_TIMEOUT_MS;
  }

  /** The key set, or why there is none yet. */
  keys(): RemoteJWKSet | { error: string } {
    return this.jwks ?? { error: `oidc: authenticator for issuer ${JSON.stringify(this.config.url)} is not initialized: ${this.problem}` };
  }

  /**
   * Tries discovery and, when it fails, keeps trying in the background until `stop`. Resolves when the first
   * attempt ends, or after `startWaitMs` if it is still waiting for the issuer.
   */
  async start(): Promise<void> {
    const first = this.attempt(this.options.retryMs?.first ?? DISCOVERY_RETRY_MS.first);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.startWaitMs ?? START_WAIT_MS);
    });
    await Promise.race([first, waited]);
    clearTimeout(timer);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    clearInterval(this.refresh);
  }

  private async attempt(nextDelayMs: number): Promise<void> {
    try {
      const jwks = await this.discover();
      if (this.stopped) return;
      this.jwks = jwks;
      this.options.logger?.info({ issuer: this.config.url }, 'OIDC issuer discovered');
      // Fetched again in the background, never while a request waits; a failed fetch keeps the keys there are.
      this.refresh = setInterval(() => {
        jwks
          .reload()
          .catch((err: Error) => this.options.logger?.warn({ issuer: this.config.url, err: err.message }, 'OIDC issuer keys could not be fetched again'));
      }, this.options.refreshMs ?? JWKS_REFRESH_MS);
      this.refresh.unref();
    } catch (err) {
      this.problem = (err as Error).message;
      if (this.stopped) return;
      this.options.logger?.warn({ issuer: this.config.url, err: this.problem, retryInMs: nextDelayMs }, 'OIDC issuer discovery failed');
      const max = this.options.retryMs?.max ?? DISCOVERY_RETRY_MS.max;
      this.retry = setTimeout(() => void this.attempt(Math.min(nextDelayMs * 2, max)), nextDelayMs);
      this.retry.unref();
    }
  }

  /** Reads the discovery document, checks it is the issuer's, and fetches the key set once. */
  private async discover(): Promise<RemoteJWKSet> {
    const { url, discoveryURL, ca } = this.config;
    const document = await getJson(discoveryURL, { ca, timeoutMs: this.timeoutMs });
    if (document.issuer !== url)
      throw new Error(`the discovery document ${discoveryURL} is for issuer ${JSON.stringify(document.issuer)}, not ${JSON.stringify(url)}`);
    const jwksUri = document.jwks_uri;
    if (typeof jwksUri !== 'string' || !jwksUri) throw new Error(`the discovery document ${discoveryURL} has no jwks_uri`);
    let keysUrl: URL;
    try {
      keysUrl = new URL(jwksUri);
    } catch {
      throw new Error(`the discovery document ${discoveryURL} has a jwks_uri that is not a URL: ${JSON.stringify(jwksUri)}`);
    }
    if (keysUrl.protocol !== 'https:') throw new Error(`the jwks_uri ${jwksUri} is not https`);
    const jwks = createRemoteJWKSet(keysUrl, {
      timeoutDuration: this.timeoutMs,
      cooldownDuration: this.options.cooldownMs ?? JWKS_COOLDOWN_MS,
      // Never stale on a request's path: the background refresh keeps them current.
      cacheMaxAge: Infinity,
      [customFetch]: (target, init) => httpsGet(target, { ca, timeoutMs: this.timeoutMs, signal: init.signal }),
    });
    try {
      await jwks.reload();
    } catch (err) {
      throw new Error(`the key set ${jwksUri} cannot be fetched: ${(err as Error).message}`);
    }
    return jwks;
  }
}
