import { describe, expect, it } from 'vitest';
import { errors } from '@skiff/api';
import { isNamespaceTerminating } from './namespace-terminating.js';

describe('isNamespaceTerminating', () => {
  it('knows a create refused in a namespace being deleted, by its cause or by the admission message', () => {
    const byCause = errors.forbidden('unable to create new content', { causes: [{ type: 'NamespaceTerminating', message: 'namespace is terminating' }] });
    const byMessage = errors.forbidden('pods "web-1" is forbidden: unable to create new content in namespace demo because it is being terminated');
    expect(isNamespaceTerminating(byCause)).toBe(true);
    expect(isNamespaceTerminating(byMessage)).toBe(true);
  });

  it('leaves other refusals and errors alone', () => {
    expect(isNamespaceTerminating(errors.forbidden('pods is forbidden: User "bob" cannot create resource "pods"'))).toBe(false);
    expect(isNamespaceTerminating(errors.notFound('namespaces', '', 'demo'))).toBe(false);
    expect(isNamespaceTerminating(new Error('because it is being terminated'))).toBe(false);
  });
});
