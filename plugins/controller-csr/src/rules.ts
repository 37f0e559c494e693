import { NODE_USER_PREFIX, NODES_GROUP, SIGNER } from './names.js';
import type { CertificateRequest } from './request.js';

const DIGITAL_SIGNATURE = 'digital signature';
const KEY_ENCIPHERMENT = 'key encipherment';
const CLIENT_AUTH = 'client auth';
const SERVER_AUTH = 'server auth';

/** Whether `usages` are exactly `required`, plus any of `optional`. */
function usagesAre(usages: readonly string[], required: readonly string[], optional: readonly string[]): boolean {
  const given = new Set(usages);
  return required.every((usage) => given.has(usage)) && [...given].every((usage) => required.includes(usage) || optional.includes(usage));
}

const list = (values: readonly string[]) => (values.length ? values.map((value) => JSON.stringify(value)).join(', ') : 'none');

/** A node's identity in a certificate: organization exactly `system:nodes`, common name `system:node:<name>`. */
function nodeSubjectProblem(request: CertificateRequest): string | undefined {
  if (request.organizations.length !== 1 || request.organizations[0] !== NODES_GROUP)
    return `the organization must be exactly ["${NODES_GROUP}"] (it is ${list(request.organizations)})`;
  if (!request.commonName.startsWith(NODE_USER_PREFIX) || request.commonName.length === NODE_USER_PREFIX.length)
    return `the common name must be "${NODE_USER_PREFIX}<node name>" (it is ${JSON.stringify(request.commonName)})`;
  return undefined;
}

/** Why a request is not a kubelet's client certificate request (signer kube-apiserver-client-kubelet), or nothing when it is one. */
export function kubeletClientProblem(request: CertificateRequest, usages: readonly string[]): string | undefined {
  const subject = nodeSubjectProblem(request);
  if (subject) return subject;
  const sans = [...request.dnsNames, ...request.ipAddresses, ...request.emailAddresses, ...request.uris];
  if (sans.length) return `a kubelet client certificate has no subject alternative names (the request has ${list(sans)})`;
  if (!usagesAre(usages, [DIGITAL_SIGNATURE, CLIENT_AUTH], [KEY_ENCIPHERMENT]))
    return `the usages must be "${DIGITAL_SIGNATURE}" and "${CLIENT_AUTH}", optionally with "${KEY_ENCIPHERMENT}" (they are ${list(usages)})`;
  return undefined;
}

/** Why a request is not a kubelet's serving certificate request (signer kubelet-serving), or nothing when it is one. */
export function kubeletServingProblem(request: CertificateRequest, usages: readonly string[]): string | undefined {
  const subject = nodeSubjectProblem(request);
  if (subject) return subject;
  if (request.emailAddresses.length || request.uris.length) return 'a kubelet serving certificate has no email or URI subject alternative names';
  if (!request.dnsNames.length && !request.ipAddresses.length) return 'a kubelet serving certificate needs at least one DNS name or IP address';
  if (!usagesAre(usages, [DIGITAL_SIGNATURE, SERVER_AUTH], [KEY_ENCIPHERMENT]))
    return `the usages must be "${DIGITAL_SIGNATURE}" and "${SERVER_AUTH}", optionally with "${KEY_ENCIPHERMENT}" (they are ${list(usages)})`;
  return undefined;
}

/** Why a request may not have a kube-apiserver-client certificate: its usages (any subject may be asked for; approval decides). */
export function apiServerClientProblem(usages: readonly string[]): string | undefined {
  if (!usagesAre(usages, [CLIENT_AUTH], [DIGITAL_SIGNATURE, KEY_ENCIPHERMENT]))
    return `the usages must include "${CLIENT_AUTH}" and may add only "${DIGITAL_SIGNATURE}" and "${KEY_ENCIPHERMENT}" (they are ${list(usages)})`;
  return undefined;
}

/** Why the signer `signerName` refuses the request, or nothing when it signs it. Only the signers of SIGNER are known here. */
export function signerProblem(signerName: string, request: CertificateRequest, usages: readonly string[]): string | undefined {
  switch (signerName) {
    case SIGNER.KUBE_APISERVER_CLIENT:
      return apiServerClientProblem(usages);
    case SIGNER.KUBE_APISERVER_CLIENT_KUBELET:
      return kubeletClientProblem(request, usages);
    case SIGNER.KUBELET_SERVING:
      return kubeletServingProblem(request, usages);
    default:
      return `the signer ${signerName} is not one of this controller's`;
  }
}

export const isOwnSigner = (signerName: string | undefined): boolean => Object.values<string>(SIGNER).includes(signerName ?? '');
