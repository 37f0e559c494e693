import { describe, expect, it } from 'vitest';
import { Kernel } from '@skiff/kernel';
import { admissionRequest, admit } from '@skiff/testing';
import denyLabel from './index.js';

const pod = (labels: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', labels },
  spec: { containers: [{ name: 'web', image: 'nginx' }] },
});

describe('skiff-plugin-deny-label', () => {
  const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(denyLabel, { label: 'forbidden', message: 'no forbidden pods' });

  it('rejects pods with the label, with the configured message', async () => {
    await expect(admit(kernel, admissionRequest({ object: pod({ forbidden: 'yes' }) }))).rejects.toThrow(
      'pods "web" is forbidden: no forbidden pods',
    );
  });

  it('admits pods without it', async () => {
    await expect(admit(kernel, admissionRequest({ object: pod({ app: 'web' }) }))).resolves.toMatchObject({ kind: 'Pod' });
  });

  it('requires the label option', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(denyLabel, {})).toThrow(
      'plugin "skiff-plugin-deny-label": option "label" is required',
    );
  });
});
