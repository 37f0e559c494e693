import type { CertificateSigningRequest, CertificateSigningRequestCondition } from '@skiff/api';
import { kubeTime } from '@skiff/controller-manager';
import { CONDITION } from './names.js';

export function conditionOf(csr: CertificateSigningRequest, type: string): CertificateSigningRequestCondition | undefined {
  return csr.status?.conditions?.find((condition) => condition.type === type && condition.status === 'True');
}

export const isApproved = (csr: CertificateSigningRequest): boolean => !!conditionOf(csr, CONDITION.APPROVED) && !conditionOf(csr, CONDITION.DENIED);
export const isDenied = (csr: CertificateSigningRequest): boolean => !!conditionOf(csr, CONDITION.DENIED);
export const hasFailed = (csr: CertificateSigningRequest): boolean => !!conditionOf(csr, CONDITION.FAILED);
export const isIssued = (csr: CertificateSigningRequest): boolean => !!csr.status?.certificate;

/** A condition set now: `True`, with its reason and message. */
export function trueCondition(type: string, reason: string, message: string, nowMs = Date.now()): CertificateSigningRequestCondition {
  const now = kubeTime(nowMs);
  return { type, status: 'True', reason, message, lastUpdateTime: now, lastTransitionTime: now };
}

/** The request with `condition` added to its status (no other change). */
export function withCondition(csr: CertificateSigningRequest, condition: CertificateSigningRequestCondition): CertificateSigningRequest {
  return { ...{}, ...csr, status: { ...{}, ...csr.status, conditions: [...(csr.status?.conditions ?? []), condition] } };
}
