import { describe, expect, it } from 'vitest';
import { describe as name, policyFromLabels, type Policy } from './policy.js';

const PRIVILEGED: Policy = {
  enforce: { level: 'privileged', version: 'latest' },
  audit: { level: 'privileged', version: 'latest' },
  warn: { level: 'privileged', version: 'latest' },
};

const summary = (labels: Record<string, string>, defaults = PRIVILEGED) => {
  const { policy, errors } = policyFromLabels(labels, defaults);
  return { enforce: name(policy.enforce), audit: name(policy.audit), warn: name(policy.warn), errors: errors.map((e) => e.field) };
};

describe('policyFromLabels', () => {
  it('keeps the defaults for an unlabelled namespace', () => {
    expect(summary({})).toEqual({ enforce: 'privileged:latest', audit: 'privileged:latest', warn: 'privileged:latest', errors: [] });
  });

  it("reads each mode's level and version", () => {
    expect(
      summary({
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/enforce-version': 'v1.29',
        'pod-security.kubernetes.io/audit': 'restricted',
        'pod-security.kubernetes.io/warn': 'restricted',
        'pod-security.kubernetes.io/warn-version': 'v1.0',
      }),
    ).toEqual({ enforce: 'baseline:v1.29', audit: 'restricted:latest', warn: 'restricted:v1.0', errors: [] });
  });

  it('warns at an explicit enforce level stricter than warn, with its version unless warn-version is set', () => {
    expect(summary({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.30' }).warn).toBe(
      'restricted:v1.30',
    );
    expect(
      summary({
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'v1.30',
        'pod-security.kubernetes.io/warn-version': 'v1.25',
      }).warn,
    ).toBe('restricted:v1.25');
    expect(summary({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'privileged' }).warn).toBe('privileged:latest');
    const strictDefaults: Policy = { ...PRIVILEGED, warn: { level: 'restricted', version: 'latest' } };
    expect(summary({ 'pod-security.kubernetes.io/enforce': 'baseline' }, strictDefaults).warn).toBe('restricted:latest');
  });

  it('fails closed for enforce and open for audit and warn when a label does not parse', () => {
    expect(
      summary({
        'pod-security.kubernetes.io/enforce': 'nope',
        'pod-security.kubernetes.io/audit': 'nope',
        'pod-security.kubernetes.io/warn': 'nope',
        'pod-security.kubernetes.io/enforce-version': 'v1.x',
      }),
    ).toEqual({
      enforce: 'restricted:latest',
      audit: 'privileged:latest',
      warn: 'privileged:latest',
      errors: [
        'metadata.labels[pod-security.kubernetes.io/enforce]',
        'metadata.labels[pod-security.kubernetes.io/enforce-version]',
        'metadata.labels[pod-security.kubernetes.io/audit]',
        'metadata.labels[pod-security.kubernetes.io/warn]',
      ],
    });
  });

  it('accepts latest and v1.N versions only', () => {
    for (const good of ['latest', 'v1.0', 'v1.36', 'v1.99']) expect(summary({ 'pod-security.kubernetes.io/audit-version': good }).errors).toEqual([]);
    for (const bad of ['v1.01', '1.30', 'v2.0', 'Latest', 'v1.', ''])
      expect(summary({ 'pod-security.kubernetes.io/audit-version': bad }).errors).toHaveLength(1);
  });
});
