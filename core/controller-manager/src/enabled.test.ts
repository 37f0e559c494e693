import { describe, expect, it } from 'vitest';
import { checkEnabledNames, isControllerEnabled } from './enabled.js';

describe('isControllerEnabled', () => {
  it('runs everything with "*"', () => {
    expect(isControllerEnabled('deployment', ['*'])).toBe(true);
  });

  it('runs only the named controllers without "*"', () => {
    expect(isControllerEnabled('deployment', ['deployment'])).toBe(true);
    expect(isControllerEnabled('replicaset', ['deployment'])).toBe(false);
    expect(isControllerEnabled('replicaset', [])).toBe(false);
  });

  it('lets "-name" switch one off, whatever else is listed', () => {
    expect(isControllerEnabled('garbage-collector', ['*', '-garbage-collector'])).toBe(false);
    expect(isControllerEnabled('garbage-collector', ['garbage-collector', '-garbage-collector'])).toBe(false);
    expect(isControllerEnabled('deployment', ['*', '-garbage-collector'])).toBe(true);
  });
});

describe('checkEnabledNames', () => {
  it('accepts "*" and names of registered controllers, with or without "-"', () => {
    expect(() => checkEnabledNames(['*', 'deployment', '-replicaset'], ['deployment', 'replicaset'])).not.toThrow();
  });

  it('names an unknown controller and lists the known ones', () => {
    expect(() => checkEnabledNames(['-replicaset', 'deploymnet'], ['deployment', 'replicaset'])).toThrow(
      'option "enabled" names controller "deploymnet", which no plugin registered (known: deployment, replicaset)',
    );
  });
});
