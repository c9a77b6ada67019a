/**
 * Kubernetes resource quantities, exact.
 *
 * A quantity is held as a whole number of nano-units in a `bigint` (1 = 1e-9 of the unit),
 * plus the suffix family it was written in. No floating point is used anywhere, so
 * `1500m < 2`, `8Gi == 8192Mi` and sums of thousands of Node allocatables stay exact.
 *
 * API (everything that takes a quantity accepts a `ParsedQuantity` or the wire form, a
 * string such as `"500m"` or an integer JSON number):
 *
 * | function                          | returns                                              |
 * |-----------------------------------|------------------------------------------------------|
 * | `parseQuantity(value)`            | `ParsedQuantity`; throws `QuantityError` on bad input |
 * | `formatQuantity(q)`               | the canonical Kubernetes string (`"1500m"`, `"8Gi"`)  |
 * | `canonicalQuantity(value)`        | `formatQuantity(parseQuantity(value))`               |
 * | `compareQuantities(a, b)`         | `-1`, `0` or `1`                                     |
 * | `addQuantities(...qs)`            | the sum (`ZERO_QUANTITY` for none)                   |
 * | `subtractQuantities(a, b)`        | `a − b` (may be negative)                            |
 * | `maxQuantity(a, b)` / `minQuantity(a, b)` | the larger / smaller (the first on a tie)    |
 * | `isZeroQuantity(q)`, `isNegativeQuantity(q)` | tests                                     |
 *
 * Semantics follow k8s.io/apimachinery `resource.Quantity` (checked against v0.35.4):
 *
 * - Accepted syntax is `[+-]<digits>[.<digits>]<suffix>` (also `5.` and `.5`), where the
 *   suffix is a binary one (`Ki Mi Gi Ti Pi Ei`, powers of 1024), a decimal one
 *   (`n u m "" k M G T P E`, powers of 1000) or a decimal exponent (`e3`, `E-2`, `e+6`;
 *   integer exponents only). This is the CRD schema's pattern, minus fractional exponents,
 *   which apimachinery rejects too. Positive exponents above 1000 are refused.
 * - JSON numbers are accepted when they are safe integers (the schemas allow integers only;
 *   a larger or fractional number may already have lost precision in `JSON.parse`).
 * - Precision finer than a nano-unit is rounded away from zero (`0.5n` → `1n`, `-0.1n` →
 *   `-1n`), as Kubernetes does: asking for a tiny amount still asks for something.
 * - A binary-suffixed value above 2^63−1 is capped at 2^63−1 (`9Ei` → `9223372036854775807`),
 *   as apimachinery does when it parses; arithmetic never caps.
 * - Formatting gives apimachinery's canonical form: `0` for zero; otherwise the suffix
 *   family of the input (for a sum or difference, of the left operand, or of the right one
 *   when the left is zero). Decimal: trailing zeros move into a suffix whose exponent is a
 *   multiple of 3 (`2000` → `2k`, `1.5` → `1500m`, `1e-10` → `1e-9` after rounding). Binary:
 *   the largest binary suffix that divides the value (`8192Mi` → `8Gi`, `1536Ki` stays); a
 *   binary value that is fractional or strictly between −1024 and 1024 is written in
 *   decimal (`0.5Gi` → `512Mi`, `1.5Ki` → `1536`).
 * - Deliberate difference: apimachinery drops the suffix of values beyond its largest
 *   suffix (it prints `1000E` as `1` and `1024Ei` past its cap wrongly); here such values
 *   keep the largest suffix with a longer number (`1000E`, `1024Ei`), which is exact.
 */
import { memoiseByText } from '../memo/bounded-memo.js';
import type { Quantity } from '../generated/types/index.js';

/** The suffix family a quantity was written in; it decides how it is formatted. */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** An exact quantity: `nanos` × 1e-9 units, formatted in `format`'s suffix family. */
export interface ParsedQuantity {
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

/** What the functions below accept: a parsed quantity or its wire form. */
export type QuantityInput = ParsedQuantity | Quantity;

/** A quantity that cannot be parsed; `value` is the input as given. */
export class QuantityError extends Error {
  constructor(
    readonly value: unknown,
    reason: string,
  ) {
    super(`invalid quantity ${describe(value)}: ${reason}`);
    this.name = 'QuantityError';
  }
}

export const ZERO_QUANTITY: ParsedQuantity = Object.freeze({ nanos: 0n, format: 'DecimalSI' });

const NANOS_PER_UNIT = 1_000_000_000n;
/** 2^63 − 1 units: apimachinery's cap for binary-suffixed values. */
const MAX_BINARY_NANOS = ((1n << 63n) - 1n) * NANOS_PER_UNIT;
const MAX_EXPONENT = 1000;

const QUANTITY_PATTERN =
  /^([+-]?)(?:([0-9]+)(?:\.([0-9]*))?|\.([0-9]+))(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?[0-9]+))?$/;

const BINARY_EXPONENTS: Record<string, bigint> = {
  Ki: 10n,
  Mi: 20n,
  Gi: 30n,
  Ti: 40n,
  Pi: 50n,
  Ei: 60n,
};
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;

const DECIMAL_EXPONENTS: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const DECIMAL_SUFFIXES = new Map<number, string>([
  [-9, 'n'],
  [-6, 'u'],
  [-3, 'm'],
  [0, ''],
  [3, 'k'],
  [6, 'M'],
  [9, 'G'],
  [12, 'T'],
  [15, 'P'],
  [18, 'E'],
]);
const MAX_DECIMAL_SUFFIX_EXPONENT = 18;

/** A parsed quantity of at most 64 characters: the object, its bigint, its format name. */
const QUANTITY_BYTES = 128;

/**
 * Parsed strings, by text. A Cell sync parses the same few strings (`"500m"`, `"32Gi"`) for
 * tens of thousands of containers; a parsed quantity is immutable (frozen), so one object can
 * serve them all. Bounded by bytes (1 MiB as accounted: about 4,000 short quantities); a text
 * over 64 characters is parsed every time, never kept. Only valid quantities are kept.
 */
const parseString = memoiseByText(
  { maxBytes: 1024 * 1024, maxTextLength: 64, key: 'text', sizeOf: () => QUANTITY_BYTES },
  (text) => Object.freeze(parseUncached(text)),
);

/** Parses a quantity; throws a `QuantityError` naming the value when it is not one. */
export function parseQuantity(value: QuantityInput): ParsedQuantity {
  return typeof value === 'string' ? parseString(value) : parseUncached(value);
}

function parseUncached(value: QuantityInput): ParsedQuantity {
  if (isParsed(value)) return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new QuantityError(
        value,
        'a number must be a safe integer; write other amounts as a string such as "1.5" or "500m"',
      );
    }
    return { nanos: BigInt(value) * NANOS_PER_UNIT, format: 'DecimalSI' };
  }
  if (typeof value !== 'string') {
    throw new QuantityError(value, 'expected a string or an integer');
  }
  const match = QUANTITY_PATTERN.exec(value);
  if (match === null) {
    throw new QuantityError(
      value,
      'expected a number with an optional suffix (n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent such as e3)',
    );
  }
  const [, sign = '', whole, fraction, bareFraction, binary, decimal, exponent] = match;
  const fractionDigits = fraction ?? bareFraction ?? '';
  const digits = BigInt(`${whole ?? ''}${fractionDigits}` || '0');

  let format: QuantityFormat;
  let nanos: bigint;
  if (binary !== undefined) {
    format = 'BinarySI';
    const binaryExponent = BINARY_EXPONENTS[binary] ?? 0n;
    nanos = scaleByPowerOfTen(digits << binaryExponent, 9 - fractionDigits.length);
  } else {
    let power: number;
    if (exponent !== undefined) {
      format = 'DecimalExponent';
      power = Number(exponent);
      if (power > MAX_EXPONENT) {
        throw new QuantityError(
          value,
          `exponent ${exponent} is out of range (at most ${MAX_EXPONENT})`,
        );
      }
    } else {
      format = 'DecimalSI';
      power = decimal === undefined ? 0 : (DECIMAL_EXPONENTS[decimal] ?? 0);
    }
    nanos = scaleByPowerOfTen(digits, power + 9 - fractionDigits.length);
  }

  if (format === 'BinarySI') {
    if (nanos > MAX_BINARY_NANOS) nanos = MAX_BINARY_NANOS;
    // apimachinery writes a binary value between 0 and 1 in decimal.
    if (nanos > 0n && nanos < NANOS_PER_UNIT) format = 'DecimalSI';
  }
  if (sign === '-') nanos = -nanos;
  return { nanos, format };
}

/** The canonical Kubernetes string for a quantity (see the rules at the top of this file). */
export function formatQuantity(value: QuantityInput): string {
  const { nanos, format } = parseQuantity(value);
  if (nanos === 0n) return '0';
  if (format === 'BinarySI') {
    const small = nanos > -1024n * NANOS_PER_UNIT && nanos < 1024n * NANOS_PER_UNIT;
    if (!small && nanos % NANOS_PER_UNIT === 0n) return formatBinary(nanos / NANOS_PER_UNIT);
    return formatDecimal(nanos, 'DecimalSI');
  }
  return formatDecimal(nanos, format);
}

/** `formatQuantity(parseQuantity(value))`: the canonical form of a wire quantity. */
export function canonicalQuantity(value: QuantityInput): string {
  return formatQuantity(parseQuantity(value));
}

/** Compares two quantities exactly: -1 when a < b, 0 when equal, 1 when a > b. */
export function compareQuantities(a: QuantityInput, b: QuantityInput): -1 | 0 | 1 {
  const x = parseQuantity(a).nanos;
  const y = parseQuantity(b).nanos;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The exact sum. The result keeps the format of the first non-zero operand, as
 * apimachinery's `Add` keeps the receiver's format unless the receiver is zero.
 */
export function addQuantities(...values: readonly QuantityInput[]): ParsedQuantity {
  let sum: ParsedQuantity = ZERO_QUANTITY;
  for (const value of values) {
    const q = parseQuantity(value);
    sum = { nanos: sum.nanos + q.nanos, format: sum.nanos === 0n ? q.format : sum.format };
  }
  return sum;
}

/** `a − b`, exact, possibly negative; in a's format (b's when a is zero). */
export function subtractQuantities(a: QuantityInput, b: QuantityInput): ParsedQuantity {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  return { nanos: x.nanos - y.nanos, format: x.nanos === 0n ? y.format : x.format };
}

/** The larger of two quantities (the first when they are equal). */
export function maxQuantity(a: QuantityInput, b: QuantityInput): ParsedQuantity {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  return y.nanos > x.nanos ? y : x;
}

/** The smaller of two quantities (the first when they are equal). */
export function minQuantity(a: QuantityInput, b: QuantityInput): ParsedQuantity {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  return y.nanos < x.nanos ? y : x;
}

export function isZeroQuantity(value: QuantityInput): boolean {
  return parseQuantity(value).nanos === 0n;
}

export function isNegativeQuantity(value: QuantityInput): boolean {
  return parseQuantity(value).nanos < 0n;
}

function isParsed(value: unknown): value is ParsedQuantity {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ParsedQuantity).nanos === 'bigint' &&
    typeof (value as ParsedQuantity).format === 'string'
  );
}

/** `value × 10^power` for a non-negative value, rounding a fractional result up. */
function scaleByPowerOfTen(value: bigint, power: number): bigint {
  if (power >= 0) return value * 10n ** BigInt(power);
  if (value === 0n) return 0n;
  // More places to drop than digits: a non-zero value below one nano-unit rounds up to one.
  if (-power > value.toString().length) return 1n;
  const divisor = 10n ** BigInt(-power);
  const quotient = value / divisor;
  return value % divisor === 0n ? quotient : quotient + 1n;
}

function formatDecimal(nanos: bigint, format: 'DecimalSI' | 'DecimalExponent'): string {
  let mantissa = nanos;
  let exponent = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent += 1;
  }
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent -= 1;
  }
  if (format === 'DecimalExponent') {
    return exponent === 0 ? mantissa.toString() : `${mantissa}e${exponent}`;
  }
  if (exponent > MAX_DECIMAL_SUFFIX_EXPONENT) {
    mantissa *= 10n ** BigInt(exponent - MAX_DECIMAL_SUFFIX_EXPONENT);
    exponent = MAX_DECIMAL_SUFFIX_EXPONENT;
  }
  return `${mantissa}${DECIMAL_SUFFIXES.get(exponent) ?? ''}`;
}

function formatBinary(units: bigint): string {
  let mantissa = units;
  let index = 0;
  while (index < BINARY_SUFFIXES.length - 1 && mantissa % 1024n === 0n) {
    mantissa /= 1024n;
    index += 1;
  }
  return `${mantissa}${BINARY_SUFFIXES[index] ?? ''}`;
}

function describe(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  }
  if (typeof value === 'number') return String(value);
  return value === null ? 'null' : typeof value;
}
