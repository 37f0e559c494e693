import type { Socket } from 'node:net';
import { TLSSocket, type DetailedPeerCertificate } from 'node:tls';

const chains = new WeakMap<Socket, Buffer[] | undefined>();

/**
 * The client's certificate chain (DER, leaf first) as presented on this TLS connection, unverified: the
 * server asks for a certificate without requiring one, and the x509 authenticator decides what it proves.
 * Read once per connection, since keep-alive connections carry many requests.
 */
export function peerCertificates(socket: Socket): Buffer[] | undefined {
  if (chains.has(socket)) return chains.get(socket);
  let chain: Buffer[] | undefined;
  if (socket instanceof TLSSocket) {
    const out: Buffer[] = [];
    let certificate: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
    while (certificate?.raw && out.length < 10) {
      out.push(certificate.raw);
      const issuer: DetailedPeerCertificate | undefined = certificate.issuerCertificate;
      if (!issuer || issuer === certificate || issuer.raw?.equals(certificate.raw)) break;
      certificate = issuer;
    }
    chain = out.length > 0 ? out : undefined;
  }
  chains.set(socket, chain);
  return chain;
}
