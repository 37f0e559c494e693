import { createHash, X509Certificate } from 'node:crypto';
import type { UserInfo } from '@skiff/api';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';
const AUTHENTICATED_GROUP = 'system:authenticated';
/** Where kube-apiserver names the certificate that authenticated a user (its SHA-256), in the user's extra. */
const CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';
const MAX_CHAIN = 10;

/** A certificate chain's verdict: who it names and when that holds, or why it names nobody. */
export type Verdict = { user: UserInfo; notBefore: number; notAfter: number } | { reason: string };

/** What `authenticate` answers: a user, or the reason to add to the 401 (undefined: no certificate at all). */
export type Authentication = { user: UserInfo } | { reason: string } | undefined;

export interface VerifierOptions {
  /** Verdicts kept for chains seen on earlier connections; the oldest goes first. Default 4096. */
  cacheSize?: number;
  /** The clock, for tests. */
  now?: () => number;
}

/**
 * Checks client certificate chains (DER, leaf first, as the TLS layer received them, unverified) against a CA
 * bundle: each certificate's signature up to one of the CAs (intermediates taken from the chain), every one
 * within its validity window, and extended key usage allowing client authentication wherever it is restricted.
 * The user is the leaf's CN, its groups the O values, plus system:authenticated.
 *
 * Verifying costs a parse and an RSA or ECDSA check per certificate, so verdicts are kept: by the chain's array
 * (a keep-alive connection hands the same one for each request) and by the chain's SHA-256 (a client opening
 * new connections with the same certificate). Only the validity window is checked again each time.
 */
export class ClientCertificateVerifier {
  private readonly roots: X509Certificate[];
  private readonly byChain = new WeakMap<readonly Buffer[], Verdict>();
  private readonly byDigest = new Map<string, Verdict>();
  private readonly cacheSize: number;
  private readonly now: () => number;

  constructor(caBundlePem: string, options: VerifierOptions = {}) {
    this.roots = parseBundle(caBundlePem);
    if (this.roots.length === 0) throw new Error('the CA bundle holds no certificate');
    this.cacheSize = options.cacheSize ?? 4096;
    this.now = options.now ?? Date.now;
  }

  authenticate(chain: readonly Buffer[] | undefined): Authentication {
    if (!chain?.length) return undefined;
    const verdict = this.verdict(chain);
    if ('reason' in verdict) return verdict;
    const now = this.now();
    if (now < verdict.notBefore || now > verdict.notAfter) {
      const [when, bound] = now > verdict.notAfter ? ['after', verdict.notAfter] : ['before', verdict.notBefore];
      return { reason: `x509: certificate has expired or is not yet valid: current time ${isoSeconds(now)} is ${when} ${isoSeconds(bound)}` };
    }
    return { user: verdict.user };
  }

  private verdict(chain: readonly Buffer[]): Verdict {
    const known = this.byChain.get(chain);
    if (known) return known;
    const hash = createHash('sha256');
    for (const der of chain) hash.update(der);
    const digest = hash.digest('hex');
    let verdict = this.byDigest.get(digest);
    if (verdict) {
      // Most recently used last, so the oldest is the one dropped.
      this.byDigest.delete(digest);
    } else {
      verdict = verifyChain(chain, this.roots);
      if (this.byDigest.size >= this.cacheSize) this.byDigest.delete(this.byDigest.keys().next().value!);
    }
    this.byDigest.set(digest, verdict);
    this.byChain.set(chain, verdict);
    return verdict;
  }
}

/** Every certificate of a PEM bundle. */
export function parseBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

function verifyChain(chain: readonly Buffer[], roots: X509Certificate[]): Verdict {
  let presented: X509Certificate[];
  try {
    presented = chain.slice(0, MAX_CHAIN).map((der) => new X509Certificate(der));
  } catch {
    return { reason: 'x509: the client certificate cannot be parsed' };
  }
  const [leaf, ...intermediates] = presented as [X509Certificate, ...X509Certificate[]];
  const path = [leaf];
  for (let current = leaf; ; ) {
    const root = roots.find((candidate) => signedBy(current, candidate));
    if (root) {
      path.push(root);
      break;
    }
    const next = intermediates.find((candidate) => candidate.ca && !path.includes(candidate) && signedBy(current, candidate));
    if (!next || path.length >= MAX_CHAIN) return { reason: `x509: certificate signed by unknown authority (issuer "${oneLine(leaf.issuer)}")` };
    path.push(next);
    current = next;
  }
  const restricted = path.find((certificate) => {
    const usages = certificate.keyUsage;
    return usages !== undefined && usages.length > 0 && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_EXTENDED_KEY_USAGE);
  });
  if (restricted) return { reason: 'x509: certificate specifies an incompatible key usage (client authentication is not among its extended key usages)' };

  const subject = leaf.toLegacyObject().subject as Record<string, string | string[] | undefined>;
  const names = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
  // With several CNs the last counts, as Go's x509 reads them.
  const username = names(subject.CN).at(-1);
  if (!username) return { reason: 'x509: the client certificate has no common name (CN) to take as the user name' };
  const groups = [...new Set([...names(subject.O), AUTHENTICATED_GROUP])];
  const credentialId = `X509SHA256=${leaf.fingerprint256.replaceAll(':', '').toLowerCase()}`;
  // Frozen: the same user goes to every request that presents this chain.
  const user: UserInfo = Object.freeze({
    username,
    groups: Object.freeze(groups) as string[],
    extra: Object.freeze({ [CREDENTIAL_ID]: Object.freeze([credentialId]) as string[] }),
  });
  return {
    user,
    notBefore: Math.max(...path.map((certificate) => Date.parse(certificate.validFrom))),
    notAfter: Math.min(...path.map((certificate) => Date.parse(certificate.validTo))),
  };
}

/** `issuer` issued `certificate` (names and key identifiers match) and its key made the signature. */
function signedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

function oneLine(name: string): string {
  return name.split('\n').join(', ');
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
