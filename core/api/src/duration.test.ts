import { describe, expect, it } from 'vitest';
import { humanAge, humanDuration, shortHumanDuration } from './duration.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;
const y = 365 * d;

describe('humanDuration (kubectl AGE)', () => {
  it.each([
    [-3 * s, '<invalid>'],
    [-2 * s, '<invalid>'],
    [-1.5 * s, '0s'],
    [0, '0s'],
    [999, '0s'],
    [59 * s, '59s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [2 * m + 3 * s, '2m3s'],
    [9 * m + 59 * s, '9m59s'],
    [10 * m + 59 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [3 * h + 5 * m + 30 * s, '3h5m'],
    [7 * h + 59 * m, '7h59m'],
    [8 * h + 30 * m, '8h'],
    [47 * h, '47h'],
    [2 * d, '2d'],
    [2 * d + 3 * h, '2d3h'],
    [7 * d + 23 * h, '7d23h'],
    [8 * d + 5 * h, '8d'],
    [15 * d, '15d'],
    [729 * d, '729d'],
    [2 * y, '2y'],
    [3 * y + 12 * d, '3y12d'],
    [7 * y + 364 * d, '7y364d'],
    [8 * y + 100 * d, '8y'],
    [20 * y, '20y'],
  ])('%d ms → %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('shortHumanDuration', () => {
  it.each([
    [-5 * s, '<invalid>'],
    [-1 * s, '0s'],
    [45 * s, '45s'],
    [90 * s, '1m'],
    [59 * m, '59m'],
    [5 * h + 59 * m, '5h'],
    [23 * h, '23h'],
    [20 * d, '20d'],
    [364 * d, '364d'],
    [3 * y + 100 * d, '3y'],
  ])('%d ms → %s', (ms, text) => {
    expect(shortHumanDuration(ms)).toBe(text);
  });
});

describe('humanAge', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');

  it('measures from a creation timestamp', () => {
    expect(humanAge('2024-05-01T11:57:57Z', now)).toBe('2m3s');
    expect(humanAge('2024-04-28T09:00:00Z', now)).toBe('3d3h');
  });

  it('prints <unknown> when there is no usable timestamp', () => {
    expect(humanAge(undefined, now)).toBe('<unknown>');
    expect(humanAge(null, now)).toBe('<unknown>');
    expect(humanAge('yesterday', now)).toBe('<unknown>');
  });
});
