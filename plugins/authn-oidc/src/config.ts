import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { checkOptions } from '@skiff/kernel';
import { DEFAULT_SIGNING_ALGORITHMS, DISCOVERY_PATH } from './names.js';
import { JWT_ENTRIES_SCHEMA } from './schema.js';

/** One `jwt` entry of the plugin's options, as the user writes it (AuthenticationConfiguration's shape). */
export interface JwtEntryOptions {
  issuer: {
    url: string;
    discoveryURL?: string;
    audiences: string[];
    audienceMatchPolicy?: 'MatchAny';
    certificateAuthority?: string;
    certificateAuthorityFile?: string;
  };
  claimValidationRules?: { claim: string; requiredValue: string }[];
  claimMappings: {
    username: { claim?: string; prefix?: string };
    groups: { claim?: string; prefix?: string };
    uid: { claim?: string };
  };
}

/** How the claims of a verified token become a user. */
export interface ClaimMapping {
  username: { claim: string; prefix: string };
  groups?: { claim: string; prefix: string };
  uid?: { claim: string };
  /** Claims that must be present with exactly this string value. */
  required: { claim: string; value: string }[];
}

/** One issuer, checked and with its defaults filled in. */
export interface IssuerConfig {
  url: string;
  discoveryURL: string;
  audiences: string[];
  /** PEM certificates trusted for the issuer's TLS; the system's roots when absent. */
  ca?: string;
  algorithms: string[];
  claims: ClaimMapping;
}

/** Why an option is wrong: `{ path, message }`, turned into one line naming the plugin. */
export class OptionProblem extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`option "${path}" ${message}`);
  }
}

function httpsUrl(value: string, path: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OptionProblem(path, `must be a URL (got ${JSON.stringify(value)})`);
  }
  if (url.protocol !== 'https:') throw new OptionProblem(path, `must be an https URL (got ${JSON.stringify(value)})`);
  if (url.username || url.password) throw new OptionProblem(path, `must not carry a user or password (got ${JSON.stringify(value)})`);
  if (url.search || url.hash) throw new OptionProblem(path, `must not have a query or fragment (got ${JSON.stringify(value)})`);
  return url;
}

/** The PEM text, checked to hold at least one certificate. */
function certificates(pem: string, path: string): string {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) throw new OptionProblem(path, 'must hold PEM certificates (-----BEGIN CERTIFICATE-----)');
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new OptionProblem(path, `holds a certificate that cannot be read: ${(err as Error).message}`);
    }
  }
  return pem;
}

/**
 * Checks the `jwt` entries and fills in their defaults. Files are read relative to `rootDir` (the config file's
 * folder). The username claim defaults to `sub`; an unset prefix is the issuer URL and `#` (so `alice` of
 * https://idp.example becomes `https://idp.example#alice`), except for the `email` claim, which is taken as it is.
 */
export function issuerConfigs(entries: readonly JwtEntryOptions[], signingAlgorithms: readonly string[], rootDir: string): IssuerConfig[] {
  if (entries.length === 0) throw new OptionProblem('jwt', 'must name at least one issuer');
  const seen = new Set<string>();
  return entries.map((entry, i) => {
    const at = `jwt[${i}]`;
    // Compared with each token's `iss` exactly as written: no normalising.
    const url = entry.issuer.url;
    httpsUrl(url, `${at}.issuer.url`);
    if (seen.has(url)) throw new OptionProblem(`${at}.issuer.url`, `names an issuer already configured (${url})`);
    seen.add(url);
    const discoveryURL = entry.issuer.discoveryURL
      ? httpsUrl(entry.issuer.discoveryURL, `${at}.issuer.discoveryURL`).href
      : `${url.replace(/\/+$/, '')}${DISCOVERY_PATH}`;
    if (entry.issuer.audiences.length === 0) throw new OptionProblem(`${at}.issuer.audiences`, 'must name at least one audience');
    if (entry.issuer.audiences.some((audience) => !audience)) throw new OptionProblem(`${at}.issuer.audiences`, 'must not hold an empty audience');
    if (entry.issuer.certificateAuthority && entry.issuer.certificateAuthorityFile)
      throw new OptionProblem(`${at}.issuer`, 'may set certificateAuthority or certificateAuthorityFile, not both');
    let ca: string | undefined;
    if (entry.issuer.certificateAuthority) ca = certificates(entry.issuer.certificateAuthority, `${at}.issuer.certificateAuthority`);
    if (entry.issuer.certificateAuthorityFile) {
      const file = resolve(rootDir, entry.issuer.certificateAuthorityFile);
      let pem: string;
      try {
        pem = readFileSync(file, 'utf8');
      } catch (err) {
        throw new OptionProblem(
          `${at}.issuer.certificateAuthorityFile`,
          `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (${file})`,
        );
      }
      ca = certificates(pem, `${at}.issuer.certificateAuthorityFile`);
    }
    const mappings = entry.claimMappings;
    const usernameClaim = mappings.username.claim ?? 'sub';
    if (!usernameClaim) throw new OptionProblem(`${at}.claimMappings.username.claim`, 'must not be empty');
    const usernamePrefix = mappings.username.prefix ?? (usernameClaim === 'email' ? '' : `${url}#`);
    if (mappings.groups.prefix !== undefined && !mappings.groups.claim)
      throw new OptionProblem(`${at}.claimMappings.groups.prefix`, 'needs claimMappings.groups.claim');
    const required = (entry.claimValidationRules ?? []).map((rule, r) => {
      if (!rule.claim) throw new OptionProblem(`${at}.claimValidationRules[${r}].claim`, 'must not be empty');
      return { claim: rule.claim, value: rule.requiredValue };
    });
    return {
      url,
      discoveryURL,
      audiences: [...new Set(entry.issuer.audiences)],
      ...(ca ? { ca } : {}),
      algorithms: [...signingAlgorithms],
      claims: {
        username: { claim: usernameClaim, prefix: usernamePrefix },
        ...(mappings.groups.claim ? { groups: { claim: mappings.groups.claim, prefix: mappings.groups.prefix ?? '' } } : {}),
        ...(mappings.uid.claim ? { uid: { claim: mappings.uid.claim } } : {}),
        required,
      },
    };
  });
}

export function checkAlgorithms(algorithms: readonly string[]): string[] {
  if (algorithms.length === 0) throw new OptionProblem('signingAlgorithms', 'must name at least one algorithm');
  for (const [i, algorithm] of algorithms.entries()) {
    if (!(DEFAULT_SIGNING_ALGORITHMS as readonly string[]).includes(algorithm) && algorithm !== 'EdDSA')
      throw new OptionProblem(
        `signingAlgorithms[${i}]`,
        `must be one of ${[...DEFAULT_SIGNING_ALGORITHMS, 'EdDSA'].join(', ')} (got ${JSON.stringify(algorithm)})`,
      );
  }
  return [...algorithms];
}

/** The API versions of AuthenticationConfiguration whose `jwt` list has the shape read here. */
const AUTHENTICATION_CONFIGURATION_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1'];

/**
 * The `jwt` list of an AuthenticationConfiguration file (kube-apiserver's --authentication-config), checked as the
 * plugin's own `jwt` option is; with the folder its relative certificateAuthorityFile paths are taken from.
 */
export function jwtEntriesFromFile(file: string): { entries: JwtEntryOptions[]; baseDir: string } {
  const problem = (message: string) => new OptionProblem('configFile', `(${file}) ${message}`);
  let document: unknown;
  try {
    document = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // The parser's first line only: the rest quotes the offending source lines.
    const why = (err as Error).message.split('\n')[0]!.replace(/:$/, '');
    // A file system error carries its syscall; the parser's codes (BLOCK_AS_IMPLICIT_KEY…) are not read errors.
    throw problem(code && (err as NodeJS.ErrnoException).syscall ? `cannot be read: ${code}` : `cannot be parsed: ${why}`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw problem('must be a YAML or JSON mapping');
  const config = document as Record<string, unknown>;
  if (config.kind !== 'AuthenticationConfiguration' || !AUTHENTICATION_CONFIGURATION_VERSIONS.includes(String(config.apiVersion)))
    throw problem(
      `must be an AuthenticationConfiguration of ${AUTHENTICATION_CONFIGURATION_VERSIONS.join(', ')} (got kind ${JSON.stringify(config.kind ?? null)}, apiVersion ${JSON.stringify(config.apiVersion ?? null)})`,
    );
  const other = Object.keys(config).filter((key) => !['apiVersion', 'kind', 'jwt'].includes(key));
  if (other.length) throw problem(`has ${other.join(', ')}: only jwt is read here (anonymous access is @skiff/plugin-authn-anonymous's)`);
  try {
    return { entries: checkOptions(JWT_ENTRIES_SCHEMA, config.jwt ?? [], 'jwt') as JwtEntryOptions[], baseDir: dirname(file) };
  } catch (err) {
    throw problem((err as Error).message);
  }
}
