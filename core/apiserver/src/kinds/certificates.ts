// certificates.k8s.io/v1: certificate signing requests. The requesting user (spec.username, uid, groups,
// extra) is recorded by the create handler registered in kinds/index.ts, which sees the request.
import { defineKind, humanDuration, restoreField, RESOURCES, type CertificateSigningRequest, type ResourceDefinition, type StatusCause } from '@skiff/api';
import { fieldErrors, GoLiteral, isDNS1123Label, isDNS1123Subdomain } from '@skiff/api/validation';
import { AGE_COLUMN, computed } from './columns.js';
import { selectorField } from './field-selectors.js';

const MIN_EXPIRATION_SECONDS = 600;
const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';
/** Conditions only the approval subresource may set. */
const APPROVAL_CONDITIONS = ['Approved', 'Denied'];

/** The types of the well-formed PEM blocks in a base64-encoded (JSON []byte) field. */
function pemBlockTypes(encoded: string | undefined): string[] {
  if (!encoded) return [];
  const text = Buffer.from(encoded, 'base64').toString('latin1');
  const types: string[] = [];
  for (const match of text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g)) {
    const der = Buffer.from(match[2]!.replace(/\s+/g, ''), 'base64');
    // Every X.509 structure is a DER SEQUENCE.
    if (der.length > 0 && der[0] === 0x30) types.push(match[1]!);
  }
  return types;
}

const BYTES = new GoLiteral('[]byte{...}');

/** A signer name is `<domain with a dot>/<path of DNS subdomains>`. */
function validateSignerName(name: string | undefined, path: string): StatusCause[] {
  if (!name) return [fieldErrors.required(path)];
  const segments = name.split('/');
  if (segments.length !== 2) return [fieldErrors.invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain = '', signer = ''] = segments;
  const causes: StatusCause[] = [];
  if (domain.length > 253) causes.push(fieldErrors.tooLong(path, 253));
  const labels = domain.split('.');
  for (const label of labels) {
    const problems = isDNS1123Label(label);
    if (problems.length) {
      causes.push(...problems.map((message) => fieldErrors.invalid(path, domain, `validating label "${label}": ${message}`)));
      break;
    }
  }
  if (labels.length < 2) causes.push(fieldErrors.invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const component of signer.split('.')) {
    const problems = isDNS1123Subdomain(component);
    if (problems.length) {
      causes.push(...problems.map((message) => fieldErrors.invalid(path, signer, `validating component "${component}": ${message}`)));
      break;
    }
  }
  return causes;
}

function validateCSR(csr: CertificateSigningRequest): StatusCause[] {
  const spec = csr.spec ?? {};
  const causes: StatusCause[] = [];
  if (!pemBlockTypes(spec.request).includes('CERTIFICATE REQUEST'))
    causes.push(fieldErrors.invalid('spec.request', BYTES, 'PEM block type must be CERTIFICATE REQUEST'));
  const usages = spec.usages ?? [];
  if (usages.length === 0) causes.push(fieldErrors.required('spec.usages'));
  const seen = new Set<string>();
  usages.forEach((usage, i) => {
    if (seen.has(usage)) causes.push(fieldErrors.duplicate(`spec.usages[${i}]`, usage));
    seen.add(usage);
  });
  if (spec.signerName === LEGACY_UNKNOWN_SIGNER)
    causes.push(fieldErrors.invalid('spec.signerName', spec.signerName, 'the legacy signerName is not allowed via this API version'));
  else causes.push(...validateSignerName(spec.signerName, 'spec.signerName'));
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds < MIN_EXPIRATION_SECONDS) {
    causes.push(fieldErrors.invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  const conditions = csr.status?.conditions ?? [];
  const types = new Set<string>();
  conditions.forEach((condition, i) => {
    const path = `status.conditions[${i}]`;
    if (!condition.type) causes.push(fieldErrors.required(`${path}.type`));
    else if (APPROVAL_CONDITIONS.includes(condition.type) || condition.type === 'Failed') {
      if (types.has(condition.type)) causes.push(fieldErrors.duplicate(`${path}.type`, condition.type));
      if (APPROVAL_CONDITIONS.includes(condition.type) && condition.status !== 'True')
        causes.push(fieldErrors.notSupported(`${path}.status`, condition.status ?? '', ['True']));
    }
    types.add(condition.type ?? '');
  });
  if (types.has('Approved') && types.has('Denied'))
    causes.push(
      fieldErrors.invalid(
        'status.conditions',
        new GoLiteral('[]certificates.CertificateSigningRequestCondition{...}'),
        'Approved and Denied conditions are mutually exclusive',
      ),
    );
  if (csr.status?.certificate && !pemBlockTypes(csr.status.certificate).every((type) => type === 'CERTIFICATE'))
    causes.push(fieldErrors.invalid('status.certificate', '<certificate data>', 'only CERTIFICATE PEM blocks are allowed'));
  return causes;
}

/** Condition, as kubectl prints it: Denied, Approved or Pending, then Failed and Issued. */
function csrCondition(csr: CertificateSigningRequest): string {
  const types = new Set((csr.status?.conditions ?? []).map((condition) => condition.type));
  const parts = [types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending'];
  if (types.has('Failed')) parts.push('Failed');
  if (csr.status?.certificate) parts.push('Issued');
  return parts.join(',');
}

export const certificateSigningRequests = defineKind<CertificateSigningRequest>({
  ...{},
  ...RESOURCES.certificatesigningrequests,
  subresources: ['approval', 'status'],
  columns: [
    AGE_COLUMN,
    computed('SignerName', (csr) => csr.spec?.signerName || '<none>'),
    computed('Requestor', (csr) => csr.spec?.username ?? ''),
    computed('RequestedDuration', (csr) => (csr.spec?.expirationSeconds === undefined ? '<none>' : humanDuration(csr.spec.expirationSeconds * 1000))),
    computed('Condition', csrCondition),
  ],
  strategy: {
    validate: validateCSR,
    fieldSelectors: { 'spec.signerName': selectorField<CertificateSigningRequest>((csr) => csr.spec?.signerName) },
    prepareForUpdate(csr, was, subresource) {
      // The spec is fixed once requested; a status write may not approve or deny.
      restoreField(csr, was, 'spec');
      if (subresource === 'status' && csr.status) {
        const kept = (was.status?.conditions ?? []).filter((condition) => APPROVAL_CONDITIONS.includes(condition.type ?? ''));
        const others = (csr.status.conditions ?? []).filter((condition) => !APPROVAL_CONDITIONS.includes(condition.type ?? ''));
        if (kept.length || others.length) csr.status.conditions = [...kept, ...others];
        else delete csr.status.conditions;
      }
      // An approval write changes the conditions only (a patch of approval may send a whole status).
      if (subresource === 'approval') {
        const conditions = csr.status?.conditions;
        csr.status = { ...{}, ...was.status, ...(conditions ? { conditions } : {}) };
        if (!conditions) delete csr.status.conditions;
      }
    },
  },
});

export const CERTIFICATES_KINDS: ResourceDefinition[] = [certificateSigningRequests];
