// The name rules of Kubernetes (k8s.io/apimachinery/pkg/util/validation), returning the same
// messages: each function returns the list of problems, empty when the value is fine.
import { isIP } from 'node:net';
import { inclusiveRange } from './field.js';

/** Kubernetes' RegexError: the message, examples, then the pattern (note the double space before "or"). */
export function regexError(message: string, pattern: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${pattern}')`;
  const listed = examples.map((e) => `'${e}', `).join(' or ');
  return `${message} (e.g. ${listed}regex used for validation is '${pattern}')`;
}

export const maxLengthError = (length: number) => `must be no more than ${length} characters`;
const EMPTY_ERROR = 'must be non-empty';

const DNS1123_LABEL_FORMAT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_LABEL = new RegExp(`^${DNS1123_LABEL_FORMAT}$`);
export const DNS1123_LABEL_MAX_LENGTH = 63;

const DNS1123_SUBDOMAIN_FORMAT = `${DNS1123_LABEL_FORMAT}(\\.${DNS1123_LABEL_FORMAT})*`;
const DNS1123_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FORMAT}$`);
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

const QUALIFIED_NAME_FORMAT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_MESSAGE = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME = new RegExp(`^${QUALIFIED_NAME_FORMAT}$`);
const QUALIFIED_NAME_MAX_LENGTH = 63;

const LABEL_VALUE_FORMAT = `(${QUALIFIED_NAME_FORMAT})?`;
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_FORMAT}$`);
const LABEL_VALUE_MAX_LENGTH = 63;

const ENV_VAR_NAME_FORMAT = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const ENV_VAR_NAME_MESSAGE =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit";
const ENV_VAR_NAME = new RegExp(`^${ENV_VAR_NAME_FORMAT}$`);

const PERCENT_FORMAT = '[0-9]+%';
const PERCENT = new RegExp(`^${PERCENT_FORMAT}$`);

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLengthError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL.test(value)) errs.push(regexError(DNS1123_LABEL_MESSAGE, DNS1123_LABEL_FORMAT, 'my-name', '123-abc'));
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLengthError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MESSAGE, DNS1123_SUBDOMAIN_FORMAT, 'example.com'));
  return errs;
}

/** A label key, annotation key or finalizer: an optional DNS subdomain prefix and '/', then a name. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY_ERROR}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MESSAGE, QUALIFIED_NAME_FORMAT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY_ERROR}`);
  else if (name.length > QUALIFIED_NAME_MAX_LENGTH) errs.push(`name part ${maxLengthError(QUALIFIED_NAME_MAX_LENGTH)}`);
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${regexError(QUALIFIED_NAME_MESSAGE, QUALIFIED_NAME_FORMAT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > LABEL_VALUE_MAX_LENGTH) errs.push(maxLengthError(LABEL_VALUE_MAX_LENGTH));
  if (!LABEL_VALUE.test(value)) errs.push(regexError(LABEL_VALUE_MESSAGE, LABEL_VALUE_FORMAT, 'MyValue', 'my_value', '12345'));
  return errs;
}

export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (!ENV_VAR_NAME.test(value)) errs.push(regexError(ENV_VAR_NAME_MESSAGE, ENV_VAR_NAME_FORMAT, 'my.env-name', 'MY_ENV.NAME', 'MyEnvName1'));
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** An IANA_SVC_NAME, as container port names must be. */
export function isValidPortName(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 15) errs.push(maxLengthError(15));
  if (!/^[-a-z0-9]+$/.test(value)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(value)) errs.push('must contain at least one letter (a-z)');
  if (value.includes('--')) errs.push('must not contain consecutive hyphens');
  if (value.length > 0 && (value.startsWith('-') || value.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isValidPortNumber(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : [inclusiveRange(1, 65535)];
}

export function isValidPercent(value: string): string[] {
  return PERCENT.test(value) ? [] : [regexError("a valid percent string must be a numeric string followed by an ending '%'", PERCENT_FORMAT, '1%', '93%')];
}

export function isValidCIDR(value: string): string[] {
  const [address, bits, ...rest] = value.split('/');
  const family = isIP(address ?? '');
  const max = family === 4 ? 32 : 128;
  const valid = rest.length === 0 && family !== 0 && bits !== undefined && /^\d{1,3}$/.test(bits) && Number(bits) <= max;
  return valid ? [] : ['must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'];
}

/** How a kind's object names are checked; `prefix` is true for `generateName`. */
export type NameValidator = (name: string, prefix: boolean) => string[];

// A generateName prefix may end in '-': validate it as if a generated suffix followed.
const maskTrailingDash = (name: string) => (name.length > 1 && name.endsWith('-') ? `${name.slice(0, -1)}a` : name);

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
