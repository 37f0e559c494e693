// Kubernetes resource quantities (`500m`, `1.5`, `128Mi`, `1e3`, `2Gi`): parsing into base units (cores,
// bytes) and formatting back into the canonical strings the API prints.
//
// Integer results (millicores, bytes) and canonical strings are computed on an exact decimal
// (`±digits × 10^exp10`, a bigint mantissa), so they round exactly as Kubernetes does — up, away from
// zero — instead of inheriting binary floating-point error (`0.7` cores is 700m, not 701m).

import type { Quantity } from './types.js';

/** How a quantity is written: decimal SI suffixes (`k`, `M`, `m`…), binary ones (`Ki`, `Mi`…) or `e<n>`. */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** A quantity as written: `±mantissa × 10^exp10 × 2^exp2`, with the mantissa still in its decimal text. */
interface ParsedQuantity {
  negative: boolean;
  mantissa: string;
  exp10: number;
  exp2: number;
  format: QuantityFormat;
}

/** The same value as an exact decimal: `±digits × 10^exp10`, digits a bigint. */
interface ExactQuantity {
  negative: boolean;
  digits: bigint;
  exp10: number;
}

const QUANTITY_PATTERN = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?\d+))?$/;

/** The regular expression Kubernetes names when it rejects a quantity (quoted in our error messages). */
const KUBERNETES_QUANTITY_REGEXP = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';

const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;
const DECIMAL_EXPONENTS: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIXES: Readonly<Record<number, string>> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };

function invalid(q: unknown): Error {
  return new Error(`invalid quantity "${String(q)}": quantities must match the regular expression '${KUBERNETES_QUANTITY_REGEXP}'`);
}

function parse(q: Quantity): ParsedQuantity {
  if (typeof q === 'number' && !Number.isFinite(q)) throw invalid(q);
  const m = QUANTITY_PATTERN.exec(typeof q === 'number' ? String(q) : q);
  if (!m) throw invalid(q);
  const [, sign, mantissa, binarySuffix, decimalSuffix, exponent] = m;
  if (binarySuffix) {
    const power = BINARY_SUFFIXES.indexOf(binarySuffix as (typeof BINARY_SUFFIXES)[number]);
    return { negative: sign === '-', mantissa: mantissa!, exp10: 0, exp2: 10 * power, format: 'BinarySI' };
  }
  if (exponent !== undefined) {
    return { negative: sign === '-', mantissa: mantissa!, exp10: Number(exponent), exp2: 0, format: 'DecimalExponent' };
  }
  const exp10 = decimalSuffix ? DECIMAL_EXPONENTS[decimalSuffix]! : 0;
  return { negative: sign === '-', mantissa: mantissa!, exp10, exp2: 0, format: 'DecimalSI' };
}

/** The mantissa as a string of integer digits and a decimal exponent: `"1.50"` → `"150"`, -2. */
function integerMantissa({ mantissa, exp10 }: ParsedQuantity): { digits: string; exp10: number } {
  const point = mantissa.indexOf('.');
  if (point < 0) return { digits: mantissa, exp10 };
  const fraction = mantissa.slice(point + 1);
  return { digits: mantissa.slice(0, point) + fraction || '0', exp10: exp10 - fraction.length };
}

function exact(q: ParsedQuantity): ExactQuantity {
  const { digits, exp10 } = integerMantissa(q);
  const value = BigInt(digits) << BigInt(q.exp2);
  return { negative: q.negative && value !== 0n, digits: value, exp10 };
}

function signed(negative: boolean, magnitude: number): number {
  return negative && magnitude !== 0 ? -magnitude : magnitude;
}

/** The value in base units (cores, bytes) as a float: `"250m"` → 0.25, `"1Ki"` → 1024, `"1e3"` → 1000. */
export function parseQuantity(q: Quantity): number {
  const { negative, mantissa, exp10, exp2 } = parse(q);
  // The decimal part goes through Number's correctly rounded string parsing; 2^n factors are exact.
  return signed(negative, Number(`${mantissa}e${exp10}`) * 2 ** exp2);
}

/** `|value| × 10^scale` as an exact fraction. */
function scaled({ digits, exp10 }: ExactQuantity, scale: number): { numerator: bigint; denominator: bigint } {
  const exp = exp10 + scale;
  return exp >= 0 ? { numerator: digits * 10n ** BigInt(exp), denominator: 1n } : { numerator: digits, denominator: 10n ** BigInt(-exp) };
}

/** Safe integers have at most 15 digits for sure (2^53 ≈ 9.007e15). */
const SAFE_DIGITS = 15;

/** `value × 10^scale`, rounded up (away from zero) to an integer. */
function scaledCeiling(q: ParsedQuantity, scale: number): number {
  const { digits, exp10 } = integerMantissa(q);
  const exp = exp10 + scale;
  if (digits.length <= SAFE_DIGITS) {
    // Fast path in doubles. Exact: products of integers are exact while the result is a safe integer, and a
    // quotient of a safe integer by a power of ten is never rounded onto an integer it does not equal.
    const integer = Number(digits) * 2 ** q.exp2;
    const magnitude = exp >= 0 ? integer * 10 ** exp : Math.ceil(integer / 10 ** -exp);
    if (Number.isSafeInteger(integer) && Number.isSafeInteger(magnitude)) return signed(q.negative, magnitude);
  }
  const { numerator, denominator } = scaled(exact(q), scale);
  return signed(q.negative, Number((numerator + denominator - 1n) / denominator));
}

/** CPU in whole millicores, rounded up like Kubernetes' `MilliValue()`: `"0.5"` → 500, `"1"` → 1000, `"100m"` → 100. */
export function parseCpuMillis(q: Quantity): number {
  return scaledCeiling(parse(q), 3);
}

/** Memory or storage in whole bytes, rounded up like Kubernetes' `Value()`: `"128Mi"` → 134217728, `"1k"` → 1000. */
export function parseBytes(q: Quantity): number {
  return scaledCeiling(parse(q), 0);
}

/** Whether `q` is a well-formed quantity (a finite number, or a string Kubernetes would accept). */
export function isValidQuantity(q: unknown): q is Quantity {
  if (typeof q === 'number') return Number.isFinite(q);
  return typeof q === 'string' && QUANTITY_PATTERN.test(q);
}

/** Canonical decimal form: an integer mantissa and an exponent that is a multiple of 3, from nano to exa. */
function formatDecimal({ negative, digits, exp10 }: ExactQuantity, exponentStyle: boolean): string {
  if (digits === 0n) return '0';
  let mantissa = digits;
  let exp = exp10;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exp += 1;
  }
  let exp3 = Math.min(18, Math.floor(exp / 3) * 3);
  if (exp3 < -9) {
    // Below one nano-unit: round up to whole nanos, as Kubernetes does.
    const divisor = 10n ** BigInt(-9 - exp);
    mantissa = (mantissa + divisor - 1n) / divisor;
    exp3 = -9;
  } else {
    mantissa *= 10n ** BigInt(exp - exp3);
  }
  const suffix = exponentStyle ? (exp3 === 0 ? '' : `e${exp3}`) : DECIMAL_SUFFIXES[exp3]!;
  return `${negative ? '-' : ''}${mantissa}${suffix}`;
}

/** Canonical binary form (`1Gi`, `1536Ki`); values below 1024 or not whole bytes print in decimal form, as in Kubernetes. */
function formatBinary(q: ExactQuantity): string {
  const { numerator, denominator } = scaled(q, 0);
  if (numerator % denominator !== 0n || numerator < 1024n * denominator) return formatDecimal(q, false);
  let whole = numerator / denominator;
  let power = 0;
  while (power < BINARY_SUFFIXES.length - 1 && whole % 1024n === 0n) {
    whole /= 1024n;
    power += 1;
  }
  return `${q.negative ? '-' : ''}${whole}${BINARY_SUFFIXES[power]}`;
}

function formatExact(q: ExactQuantity, format: QuantityFormat): string {
  if (format === 'BinarySI') return formatBinary(q);
  return formatDecimal(q, format === 'DecimalExponent');
}

/**
 * The canonical string for a quantity, as the API server would print it: `0.5` → `"500m"`, `2000` → `"2k"`,
 * (`"1024Mi"`, BinarySI) → `"1Gi"`. Without `format`, a string keeps the style it was written in and a
 * number is formatted as DecimalSI.
 */
export function formatQuantity(q: Quantity, format?: QuantityFormat): string {
  const parsed = parse(q);
  return formatExact(exact(parsed), format ?? parsed.format);
}

/** `250` → `"250m"`, `2000` → `"2"`: millicores (rounded up to a whole millicore) as a CPU quantity. */
export function formatCpuMillis(millis: number): string {
  const cores = exact(parse(Math.ceil(millis)));
  return formatDecimal({ ...{}, ...cores, exp10: cores.exp10 - 3 }, false);
}

/** `134217728` → `"128Mi"`, `1500` → `"1500"`: bytes (rounded up to a whole byte) as a BinarySI quantity. */
export function formatBytes(bytes: number): string {
  return formatBinary(exact(parse(Math.ceil(bytes))));
}
