// The string formats a CRD schema may name, checked as kube-openapi's format registry checks them. Formats
// the API server does not support are ignored (as upstream strips them before validating).

type FormatCheck = (value: string) => boolean;

const DIGITS = /^[0-9]+$/;

/** Go's IPv4 parsing; `sloppy` also takes fields with leading zeros (netutils.ParseIPSloppy). */
function isIPv4Text(s: string, sloppy: boolean): boolean {
  const parts = s.split('.');
  if (parts.length !== 4) return false;
  return parts.every((p) => DIGITS.test(p) && (sloppy || p.length === 1 || p[0] !== '0') && Number(p) <= 255);
}

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/** Go's IPv6 parsing (an embedded IPv4 tail allowed, no zone). */
function isIPv6Text(s: string, sloppyV4: boolean): boolean {
  let groups = 0;
  let ellipsis = false;
  let rest = s;
  if (rest.startsWith('::')) {
    ellipsis = true;
    rest = rest.slice(2);
    if (rest === '') return true;
  }
  for (;;) {
    const colon = rest.indexOf(':');
    const part = colon < 0 ? rest : rest.slice(0, colon);
    if (colon < 0 && part.includes('.')) {
      if (!isIPv4Text(part, sloppyV4)) return false;
      groups += 2;
      break;
    }
    if (!HEX_GROUP.test(part)) return false;
    groups++;
    if (colon < 0) break;
    rest = rest.slice(colon + 1);
    if (rest.startsWith(':')) {
      if (ellipsis) return false;
      ellipsis = true;
      rest = rest.slice(1);
      if (rest === '') break;
    } else if (rest === '') {
      return false;
    }
    if (groups > 8) return false;
  }
  return ellipsis ? groups < 8 : groups === 8;
}

function isIPSloppy(s: string): boolean {
  return isIPv4Text(s, true) || isIPv6Text(s, true);
}

function isCIDR(s: string): boolean {
  const slash = s.lastIndexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!DIGITS.test(bits)) return false;
  if (isIPv4Text(ip, true)) return Number(bits) <= 32;
  return isIPv6Text(ip, true) && Number(bits) <= 128;
}

/** Go's net.ParseMAC: 6, 8 or 20 octets as `aa:bb:…`, `aa-bb-…` or `aabb.ccdd.…`. */
function isMAC(s: string): boolean {
  if (s.length < 14) return false;
  const octetCounts = [6, 8, 20];
  if (s[2] === ':' || s[2] === '-') {
    if ((s.length + 1) % 3 !== 0 || !octetCounts.includes((s.length + 1) / 3)) return false;
    const sep = s[2]!;
    return s.split(sep).every((g) => /^[0-9a-fA-F]{2}$/.test(g));
  }
  if (s[4] === '.') {
    if ((s.length + 1) % 5 !== 0 || !octetCounts.includes((2 * (s.length + 1)) / 5)) return false;
    return s.split('.').every((g) => /^[0-9a-fA-F]{4}$/.test(g));
  }
  return false;
}

const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;

function isHostname(s: string): boolean {
  if (Buffer.byteLength(s) > 255 || !HOSTNAME.test(s)) return false;
  return s.split('.').every((label) => Buffer.byteLength(label) <= 63);
}

const ATEXT = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\\u0080-\\uFFFF]";
const DOT_ATOM = `${ATEXT}+(?:\\.${ATEXT}+)*`;
const QUOTED = '"(?:[^"\\\\\\r\\n]|\\\\.)*"';
const ADDR_SPEC = new RegExp(`^(?:${DOT_ATOM}|${QUOTED})@(?:${DOT_ATOM}|\\[[^\\[\\]\\\\]*\\])$`, 'u');
const DISPLAY_NAME = new RegExp(`^(?:(?:${ATEXT}|\\.)+|${QUOTED}|\\s)*$`, 'u');

/** net/mail.ParseAddress, for the forms people write: `a@b.c` and `Name <a@b.c>`. */
function isEmail(s: string): boolean {
  const text = s.trim();
  if (text.endsWith('>')) {
    const open = text.lastIndexOf('<');
    if (open < 0) return false;
    return DISPLAY_NAME.test(text.slice(0, open)) && ADDR_SPEC.test(text.slice(open + 1, -1));
  }
  return ADDR_SPEC.test(text);
}

const VALID_ESCAPES = /%(?![0-9a-fA-F]{2})/;
const HOST_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"%]*$/;

const hasControlCharacter = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/** url.ParseRequestURI: an absolute URI, or an absolute path. */
function isRequestURI(s: string): boolean {
  if (s === '' || hasControlCharacter(s) || s.startsWith(':')) return false;
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.exec(s);
  const rest = scheme ? s.slice(scheme[0].length) : s;
  if (!rest.startsWith('/')) return scheme !== null;
  let path = rest;
  if (scheme && rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    const authority = end < 0 ? rest.slice(2) : rest.slice(2, end);
    path = end < 0 ? '' : rest.slice(end);
    const host = authority.slice(authority.lastIndexOf('@') + 1);
    if (!HOST_CHARS.test(host) || VALID_ESCAPES.test(host)) return false;
    const close = host.startsWith('[') ? host.indexOf(']') : -1;
    if (host.startsWith('[') && close < 0) return false;
    const port = close >= 0 ? host.slice(close + 1) : host.slice(Math.max(host.lastIndexOf(':'), 0));
    if (port.startsWith(':') ? !/^:[0-9]*$/.test(port) : close >= 0 && port !== '') return false;
  }
  return !VALID_ESCAPES.test(path.split('?')[0]!);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!);
}

const TIME_OF_DAY = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;

function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = TIME_OF_DAY.exec(parts[1]!);
  return m !== null && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

const GO_DURATION_UNITS = new Set(['ns', 'us', 'µs', 'μs', 'ms', 's', 'm', 'h']);

/** Go's time.ParseDuration grammar: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or "0". */
function isGoDuration(input: string): boolean {
  let s = input.replace(/^[-+]/, '');
  if (s === '0') return true;
  if (s === '') return false;
  while (s !== '') {
    const m = /^([0-9]*)(\.([0-9]*))?/.exec(s)!;
    if (m[1] === '' && !m[3]) return false;
    s = s.slice(m[0].length);
    const unit = /^[^0-9.]*/.exec(s)![0];
    if (!GO_DURATION_UNITS.has(unit)) return false;
    s = s.slice(unit.length);
  }
  return true;
}

const LONG_UNITS: readonly (readonly string[])[] = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];

/** strfmt's duration: Go's syntax, or counted units like "3 days" / "1 hour 20 min". */
function isDuration(s: string): boolean {
  if (isGoDuration(s)) return true;
  for (const m of s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)) {
    const unit = m[2]!.toLowerCase().trim();
    for (const variants of LONG_UNITS) {
      if (variants.some((v, i) => unit === v || (i === variants.length - 1 && unit.startsWith(v)))) return true;
    }
  }
  return false;
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

const CREDIT_CARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/;

function isCreditCard(s: string): boolean {
  const digits = s.replace(/[^0-9]/g, '');
  return CREDIT_CARD.test(digits) && luhn(digits);
}

function isISBN10(s: string): boolean {
  const t = s.replace(/[\s-]/g, '');
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(t)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(t[i]);
  sum += t[9] === 'X' ? 100 : 10 * Number(t[9]);
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const t = s.replace(/[\s-]/g, '');
  if (!/^[0-9]{13}$/.test(t)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(t[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(t[12]);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const RGB_PART = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';
const RGB = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);
const SHORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LONG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const uuidLike = (version: string, variant: string) =>
  new RegExp(`^[0-9a-f]{8}-?[0-9a-f]{4}-?${version}[0-9a-f]{3}-?${variant}[0-9a-f]{3}-?[0-9a-f]{12}$`, 'i');
const UUID = uuidLike('[0-9a-f]', '[0-9a-f]');
const UUID3 = uuidLike('3', '[0-9a-f]');
const UUID4 = uuidLike('4', '[89ab]');
const UUID5 = uuidLike('5', '[89ab]');

/** Supported string formats, by name with dashes removed ("date-time" is "datetime"), as upstream normalises them. */
const STRING_FORMATS: ReadonlyMap<string, FormatCheck> = new Map<string, FormatCheck>([
  ['bsonobjectid', (s) => /^[0-9a-fA-F]{24}$/.test(s)],
  ['uri', isRequestURI],
  ['email', isEmail],
  ['hostname', isHostname],
  ['ipv4', (s) => isIPSloppy(s) && s.includes('.')],
  ['ipv6', (s) => isIPv6Text(s, false) && s.includes(':')],
  ['cidr', isCIDR],
  ['mac', isMAC],
  ['uuid', (s) => UUID.test(s)],
  ['uuid3', (s) => UUID3.test(s)],
  ['uuid4', (s) => UUID4.test(s)],
  ['uuid5', (s) => UUID5.test(s)],
  ['isbn', (s) => isISBN10(s) || isISBN13(s)],
  ['isbn10', isISBN10],
  ['isbn13', isISBN13],
  ['creditcard', isCreditCard],
  ['ssn', (s) => s.length === 11 && /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s)],
  ['hexcolor', (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s)],
  ['rgbcolor', (s) => RGB.test(s)],
  ['byte', (s) => BASE64.test(s)],
  ['password', () => true],
  ['date', isDate],
  ['duration', isDuration],
  ['datetime', isDateTime],
  ['k8sshortname', (s) => s.length <= 63 && SHORT_NAME.test(s)],
  ['k8slongname', (s) => s.length <= 253 && LONG_NAME.test(s)],
]);

/** The numeric formats the validator keeps for integer and number schemas. */
const NUMBER_FORMATS: Readonly<Record<string, readonly string[]>> = { integer: ['int32', 'int64'], number: ['float', 'double'] };

/**
 * The format a schema is validated with: its `format` when the API server supports it for the schema's
 * type, otherwise '' (upstream drops unsupported formats before validating).
 */
export function effectiveFormat(type: string | undefined, format: string | undefined): string {
  if (!format) return '';
  if (!type || type === 'string') return STRING_FORMATS.has(format.replaceAll('-', '')) ? format : '';
  return NUMBER_FORMATS[type]?.includes(format) ? format : '';
}

/** The check for a supported string format, or undefined for numeric and unsupported ones. */
export function stringFormatCheck(format: string): FormatCheck | undefined {
  return STRING_FORMATS.get(format.replaceAll('-', ''));
}
