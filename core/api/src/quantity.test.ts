import { describe, expect, it } from 'vitest';
import { formatBytes, formatCpuMillis, formatQuantity, isValidQuantity, parseBytes, parseCpuMillis, parseQuantity } from './quantity.js';

describe('parseQuantity', () => {
  it.each([
    ['1', 1],
    ['0.5', 0.5],
    ['.5', 0.5],
    ['5.', 5],
    ['+2', 2],
    ['-2', -2],
    ['250m', 0.25],
    ['100u', 0.0001],
    ['5n', 5e-9],
    ['1k', 1000],
    ['2M', 2e6],
    ['3G', 3e9],
    ['1T', 1e12],
    ['1P', 1e15],
    ['1E', 1e18],
    ['1Ki', 1024],
    ['128Mi', 134217728],
    ['1.5Gi', 1610612736],
    ['1Ti', 2 ** 40],
    ['1Pi', 2 ** 50],
    ['1Ei', 2 ** 60],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1.5e-3', 0.0015],
    ['12e+2', 1200],
    [3, 3],
    [0.25, 0.25],
  ] as const)('%j → %d', (quantity, value) => {
    expect(parseQuantity(quantity)).toBe(value);
  });

  it.each(['', ' 1', '1 ', '1K', '1e', '1mi', 'Mi', '1Mi2', '1.2.3', 'abc', '--1', '1e1.5'])('rejects %j', (quantity) => {
    expect(() => parseQuantity(quantity)).toThrow(`invalid quantity "${quantity}": quantities must match the regular expression`);
    expect(isValidQuantity(quantity)).toBe(false);
  });

  it('rejects non-finite numbers', () => {
    expect(() => parseQuantity(Number.NaN)).toThrow('invalid quantity "NaN"');
    expect(isValidQuantity(Number.POSITIVE_INFINITY)).toBe(false);
    expect(isValidQuantity({})).toBe(false);
    expect(isValidQuantity('100m')).toBe(true);
    expect(isValidQuantity(2)).toBe(true);
  });
});

describe('parseCpuMillis and parseBytes', () => {
  it('round up exactly, without floating-point error', () => {
    expect(parseCpuMillis('0.7')).toBe(700);
    expect(parseCpuMillis(0.7)).toBe(700);
    expect(parseCpuMillis('1.1')).toBe(1100);
    expect(parseCpuMillis('0.29')).toBe(290);
    expect(parseCpuMillis('0.57')).toBe(570);
    expect(parseCpuMillis('4.35')).toBe(4350);
    expect(parseCpuMillis('1234567n')).toBe(2);
    expect(parseCpuMillis('2000000n')).toBe(2);
    expect(parseCpuMillis('-0')).toBe(0);
    expect(parseCpuMillis('12345678901234567890m')).toBe(12345678901234567000);
    expect(parseCpuMillis('0.00000000000000000001')).toBe(1);
    expect(parseCpuMillis('100m')).toBe(100);
    expect(parseCpuMillis('2')).toBe(2000);
    expect(parseCpuMillis('0.0001')).toBe(1);
    expect(parseCpuMillis('1500u')).toBe(2);
    expect(parseCpuMillis('250000n')).toBe(1);
    expect(parseCpuMillis('1e-3')).toBe(1);
    expect(parseCpuMillis('-0.5')).toBe(-500);
    expect(parseBytes('128Mi')).toBe(134217728);
    expect(parseBytes('1.5Ki')).toBe(1536);
    expect(parseBytes('1G')).toBe(1e9);
    expect(parseBytes('0.1')).toBe(1);
    expect(parseBytes('100m')).toBe(1);
    expect(parseBytes(2048)).toBe(2048);
    expect(parseBytes('1.005')).toBe(2);
    expect(parseBytes('8Ei')).toBe(2 ** 63);
    expect(parseQuantity('-0')).toBe(0);
  });
});

describe('formatQuantity', () => {
  it.each([
    ['0.5', undefined, '500m'],
    ['1.5', undefined, '1500m'],
    ['2000', undefined, '2k'],
    ['1500', undefined, '1500'],
    ['0', undefined, '0'],
    ['0.0000000001', undefined, '1n'],
    ['1024Mi', undefined, '1Gi'],
    ['1536Ki', undefined, '1536Ki'],
    ['1.5Gi', undefined, '1536Mi'],
    ['1e3', undefined, '1e3'],
    ['12e4', undefined, '120e3'],
    ['1000', 'BinarySI', '1k'],
    ['512', 'BinarySI', '512'],
    ['0.5', 'BinarySI', '500m'],
    ['2048', 'BinarySI', '2Ki'],
    ['1Gi', 'DecimalSI', '1073741824'],
    ['-2Ki', undefined, '-2Ki'],
    [0.1, undefined, '100m'],
    [4, undefined, '4'],
  ] as const)('%j (%s) → %j', (quantity, format, text) => {
    expect(formatQuantity(quantity, format)).toBe(text);
  });

  it('formats millicores and bytes the way the API prints them', () => {
    expect(formatCpuMillis(250)).toBe('250m');
    expect(formatCpuMillis(2000)).toBe('2');
    expect(formatCpuMillis(1500)).toBe('1500m');
    expect(formatCpuMillis(0)).toBe('0');
    expect(formatCpuMillis(0.2)).toBe('1m');
    expect(formatBytes(134217728)).toBe('128Mi');
    expect(formatBytes(1500)).toBe('1500');
    expect(formatBytes(16 * 2 ** 30)).toBe('16Gi');
    expect(formatBytes(0)).toBe('0');
  });

  it('round-trips canonical strings', () => {
    for (const text of ['100m', '1Gi', '3k', '128Mi', '1500m', '1n', '7E']) {
      expect(formatQuantity(text)).toBe(text);
      expect(parseQuantity(formatQuantity(text))).toBe(parseQuantity(text));
    }
  });
});
