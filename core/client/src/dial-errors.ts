import { isIP } from 'node:net';

/** Node's codes for a certificate that does not chain to the CA it is verified against (Go: "signed by unknown authority"). */
const UNKNOWN_AUTHORITY = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

type TlsError = NodeJS.ErrnoException & { host?: string; cert?: { subjectaltname?: string }; reason?: string };

/** Which names the certificate is valid for, and the one it was asked for, as Go's x509 says it. */
function altNameMismatch(err: TlsError): string {
  if (!err.host || !err.cert?.subjectaltname) return err.reason ?? err.message;
  const wantIp = isIP(err.host) !== 0;
  const names = err.cert.subjectaltname
    .split(', ')
    .filter((entry) => entry.startsWith(wantIp ? 'IP Address:' : 'DNS:'))
    .map((entry) => entry.slice(entry.indexOf(':') + 1));
  return names.length ? `certificate is valid for ${names.join(', ')}, not ${err.host}` : (err.reason ?? err.message);
}

/**
 * A server certificate that failed verification, in the words of Go's TLS client (`tls: failed to verify
 * certificate: x509: …`) that kube-apiserver's errors carry; undefined for any other error.
 */
export function certificateFailure(err: unknown): string | undefined {
  const code = (err as TlsError | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  if (UNKNOWN_AUTHORITY.has(code)) return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `tls: failed to verify certificate: x509: ${altNameMismatch(err as TlsError)}`;
  return undefined;
}

/** A Node network or TLS error in the words Kubernetes users know from kube-apiserver's Go client. */
export function describeDialError(err: NodeJS.ErrnoException, address: string): string {
  if (err.code === 'ECONNREFUSED') return `dial tcp ${address}: connect: connection refused`;
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return `dial tcp: lookup ${address}: no such host`;
  const certificate = certificateFailure(err);
  if (certificate) return certificate;
  if (err.code === 'ECONNRESET') return 'EOF';
  return err.message;
}
