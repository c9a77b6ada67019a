import { expect } from 'chai';
import fc from 'fast-check';
import {
  addQuantities,
  canonicalQuantity,
  compareQuantities,
  formatQuantity,
  isNegativeQuantity,
  isZeroQuantity,
  maxQuantity,
  minQuantity,
  parseQuantity,
  QuantityError,
  subtractQuantities,
  ZERO_QUANTITY,
} from './quantity.js';

/**
 * Input → canonical form, as printed by k8s.io/apimachinery v0.35.4
 * (`ParseQuantity(s)`, then `String()` of a copy with the cached input dropped).
 */
const CANONICAL: Array<[string | number, string]> = [
  ['0', '0'],
  ['-0', '0'],
  ['0m', '0'],
  ['0Ki', '0'],
  ['0e5', '0'],
  ['100m', '100m'],
  ['8Gi', '8Gi'],
  ['2', '2'],
  ['+5', '5'],
  ['00012', '12'],
  ['1.5', '1500m'],
  ['1.000', '1'],
  ['5.', '5'],
  ['.5', '500m'],
  ['1.G', '1G'],
  ['0.1', '100m'],
  ['0.001', '1m'],
  ['0.0001', '100u'],
  ['1e3', '1e3'],
  ['1e+3', '1e3'],
  ['1E3', '1e3'],
  ['10e2', '1e3'],
  ['1e1', '10'],
  ['1e2', '100'],
  ['100e-2', '1'],
  ['1E-3', '1e-3'],
  ['1e-9', '1e-9'],
  ['1e100', '10e99'],
  ['1E19', '10e18'],
  ['1.5e3', '1500'],
  ['2000', '2k'],
  ['1000m', '1'],
  ['1500m', '1500m'],
  ['1E', '1E'],
  ['1000P', '1E'],
  ['1.5E', '1500P'],
  ['1P', '1P'],
  ['500Mi', '500Mi'],
  ['8192Mi', '8Gi'],
  ['1024Mi', '1Gi'],
  ['1025Mi', '1025Mi'],
  ['0.5Gi', '512Mi'],
  ['1.5Gi', '1536Mi'],
  ['1.5Ki', '1536'],
  ['0.5Ki', '512'],
  ['1.1Ki', '1126400m'],
  ['1536Ki', '1536Ki'],
  ['1023Ki', '1023Ki'],
  ['-2048Ki', '-2Mi'],
  ['-1Ki', '-1Ki'],
  ['-0.5Ki', '-512'],
  ['-5Gi', '-5Gi'],
  ['-1536', '-1536'],
  ['-5', '-5'],
  ['1024', '1024'],
  ['1n', '1n'],
  ['1u', '1u'],
  ['12345678901234567890', '12345678901234567890'],
  ['123456789012345678901234567890', '123456789012345678901234567890'],
  // apimachinery caps binary-suffixed values at 2^63 - 1 when it parses them.
  ['8Ei', '9223372036854775807'],
  ['9Ei', '9223372036854775807'],
  ['1024Ei', '9223372036854775807'],
  // JSON numbers (integers only).
  [0, '0'],
  [4, '4'],
  [2000, '2k'],
  [-3, '-3'],
  [Number.MAX_SAFE_INTEGER, '9007199254740991'],
];

describe('quantity', () => {
  describe('parse and format (canonical form as apimachinery prints it)', () => {
    for (const [input, canonical] of CANONICAL) {
      it(`${JSON.stringify(input)} → ${canonical}`, () => {
        expect(formatQuantity(parseQuantity(input))).to.equal(canonical);
        expect(canonicalQuantity(input)).to.equal(canonical);
      });
    }

    it('rounds precision finer than a nano-unit away from zero, as Kubernetes does', () => {
      expect(canonicalQuantity('0.0000000001')).to.equal('1n');
      expect(canonicalQuantity('0.5n')).to.equal('1n');
      expect(canonicalQuantity('1.0000000001')).to.equal('1000000001n');
      expect(canonicalQuantity('-0.0000000001')).to.equal('-1n');
      expect(canonicalQuantity('1e-10')).to.equal('1e-9');
      expect(canonicalQuantity('1e-99999999')).to.equal('1e-9');
      expect(canonicalQuantity('0e-99999999')).to.equal('0');
    });

    it('keeps the largest suffix for values beyond it instead of dropping it (apimachinery prints 1000E as 1)', () => {
      expect(canonicalQuantity('1000E')).to.equal('1000E');
      expect(canonicalQuantity('1e21')).to.equal('1e21');
      expect(formatQuantity(addQuantities('8Ei', '8Ei', '8Ei'))).to.equal('27670116110564327421');
      expect(formatQuantity({ nanos: 1024n ** 7n * 1_000_000_000n, format: 'BinarySI' })).to.equal(
        '1024Ei',
      );
    });

    it('records the suffix family', () => {
      expect(parseQuantity('8Gi').format).to.equal('BinarySI');
      expect(parseQuantity('8G').format).to.equal('DecimalSI');
      expect(parseQuantity('8').format).to.equal('DecimalSI');
      expect(parseQuantity('8e9').format).to.equal('DecimalExponent');
      expect(parseQuantity('0.5Ki').format).to.equal('BinarySI');
      expect(parseQuantity('0.0005Ki').format).to.equal('DecimalSI');
      expect(parseQuantity(8).format).to.equal('DecimalSI');
    });

    it('holds huge values exactly', () => {
      const huge = '98765432109876543210987654321098765432109876543210';
      expect(canonicalQuantity(huge)).to.equal(huge);
      expect(parseQuantity(huge).nanos).to.equal(BigInt(huge) * 1_000_000_000n);
      expect(formatQuantity(addQuantities(huge, '1'))).to.equal(
        '98765432109876543210987654321098765432109876543211',
      );
    });

    it('passes a parsed quantity through unchanged', () => {
      const q = parseQuantity('3Gi');
      expect(parseQuantity(q)).to.equal(q);
    });
  });

  describe('invalid input', () => {
    const INVALID: unknown[] = [
      '',
      ' 1',
      '1 ',
      '1K',
      '1KI',
      '1i',
      '1e',
      '1ee3',
      'e3',
      '.',
      '+',
      'k',
      '1m1',
      '--1',
      '+-1',
      '1.2.3',
      '1e3.5',
      '1Mi1',
      '1,5',
      'one',
      '1e1001',
      1.5,
      -0.5,
      Number.MAX_SAFE_INTEGER + 1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      null,
      undefined,
      true,
      {},
      [],
    ];
    for (const input of INVALID) {
      it(`refuses ${typeof input === 'string' ? JSON.stringify(input) : String(input)}`, () => {
        expect(() => parseQuantity(input as string)).to.throw(QuantityError);
      });
    }

    it('names the bad value and says what is expected', () => {
      expect(() => parseQuantity('8GB')).to.throw(
        QuantityError,
        /^invalid quantity "8GB": expected a number with an optional suffix \(n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent such as e3\)$/,
      );
      expect(() => parseQuantity(1.5)).to.throw(
        QuantityError,
        'invalid quantity 1.5: a number must be a safe integer',
      );
      expect(() => parseQuantity('1e5000')).to.throw(
        QuantityError,
        'exponent 5000 is out of range',
      );
      const error = (() => {
        try {
          parseQuantity('12 cores');
        } catch (err) {
          return err as QuantityError;
        }
        return undefined;
      })();
      expect(error?.value).to.equal('12 cores');
      expect(error?.name).to.equal('QuantityError');
    });
  });

  describe('comparison', () => {
    it('compares across suffix families exactly', () => {
      expect(compareQuantities('1500m', '2')).to.equal(-1);
      expect(compareQuantities('2', '1500m')).to.equal(1);
      expect(compareQuantities('8Gi', '8192Mi')).to.equal(0);
      expect(compareQuantities('8Gi', '8G')).to.equal(1);
      expect(compareQuantities('1e3', '1k')).to.equal(0);
      expect(compareQuantities('1000m', 1)).to.equal(0);
      expect(compareQuantities('-1', '0')).to.equal(-1);
      expect(compareQuantities('0.1', '100m')).to.equal(0);
      expect(compareQuantities('9007199254740993', '9007199254740992')).to.equal(1);
      expect(compareQuantities('1n', '0')).to.equal(1);
    });

    it('tells 0.1 + 0.2 from 0.3 no differently than integers do (no floating point)', () => {
      expect(compareQuantities(addQuantities('0.1', '0.2'), '0.3')).to.equal(0);
    });

    it('max and min return the larger and smaller, the first on a tie', () => {
      expect(formatQuantity(maxQuantity('1500m', '2'))).to.equal('2');
      expect(formatQuantity(minQuantity('1500m', '2'))).to.equal('1500m');
      const a = parseQuantity('1Gi');
      const b = parseQuantity('1024Mi');
      expect(maxQuantity(a, b)).to.equal(a);
      expect(minQuantity(a, b)).to.equal(a);
    });

    it('tests for zero and negative', () => {
      expect(isZeroQuantity('0m')).to.equal(true);
      expect(isZeroQuantity('1n')).to.equal(false);
      expect(isNegativeQuantity('-1n')).to.equal(true);
      expect(isNegativeQuantity('0')).to.equal(false);
    });
  });

  describe('arithmetic', () => {
    it('adds and keeps the format of the first non-zero operand', () => {
      expect(formatQuantity(addQuantities('8Gi', '8Gi'))).to.equal('16Gi');
      expect(formatQuantity(addQuantities('0', '8Gi', '512Mi'))).to.equal('8704Mi');
      expect(formatQuantity(addQuantities('1', '512Mi'))).to.equal('536870913');
      expect(formatQuantity(addQuantities('500m', '1500m'))).to.equal('2');
      expect(formatQuantity(addQuantities('1e3', '1'))).to.equal('1001');
      expect(formatQuantity(addQuantities())).to.equal('0');
      expect(addQuantities()).to.deep.equal(ZERO_QUANTITY);
    });

    it('subtracts into negatives, as availableEstimate may be', () => {
      expect(formatQuantity(subtractQuantities('4', '6500m'))).to.equal('-2500m');
      expect(formatQuantity(subtractQuantities('8Gi', '16Gi'))).to.equal('-8Gi');
      expect(formatQuantity(subtractQuantities('8Gi', '8Gi'))).to.equal('0');
      expect(formatQuantity(subtractQuantities('0', '2Gi'))).to.equal('-2Gi');
      expect(formatQuantity(subtractQuantities('1Gi', '1'))).to.equal('1073741823');
      expect(formatQuantity(subtractQuantities('2', '2'))).to.equal('0');
    });

    it('computes allocatable − max(requested + pending, committed) exactly', () => {
      const allocatable = '63500m';
      const used = addQuantities('12250m', '750m');
      const committed = '48';
      expect(
        formatQuantity(subtractQuantities(allocatable, maxQuantity(used, committed))),
      ).to.equal('15500m');
    });
  });

  describe('properties', () => {
    const quantity = fc
      .tuple(
        fc.constantFrom('', '-'),
        fc.bigInt({ min: 0n, max: 10n ** 24n }),
        fc.constantFrom('', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'Ki', 'Mi', 'Gi', 'e3', 'e-6'),
      )
      .map(([sign, digits, suffix]) => `${sign}${digits}${suffix}`);

    it('formatting is a fixed point: parse(format(q)) has the same value and format', () => {
      fc.assert(
        fc.property(quantity, (input) => {
          const q = parseQuantity(input);
          const again = parseQuantity(formatQuantity(q));
          expect(again.nanos).to.equal(q.nanos);
          expect(formatQuantity(again)).to.equal(formatQuantity(q));
        }),
      );
    });

    it('a + b − b = a, and comparison agrees with subtraction', () => {
      fc.assert(
        fc.property(quantity, quantity, (a, b) => {
          expect(compareQuantities(subtractQuantities(addQuantities(a, b), b), a)).to.equal(0);
          const difference = subtractQuantities(a, b).nanos;
          expect(compareQuantities(a, b)).to.equal(difference < 0n ? -1 : difference > 0n ? 1 : 0);
        }),
      );
    });
  });
});
