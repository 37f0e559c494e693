import { describe, expect, it } from 'vitest';
import { ControllerRegistryImpl } from './registry.js';

describe('ControllerRegistryImpl', () => {
  it('lists controllers in registration order', () => {
    const registry = new ControllerRegistryImpl();
    registry.register({ name: 'replicaset', start() {} });
    registry.register({ name: 'deployment', start() {} });
    expect(registry.list().map((c) => c.name)).toEqual(['replicaset', 'deployment']);
  });

  it('rejects a second controller with the same name', () => {
    const registry = new ControllerRegistryImpl();
    registry.register({ name: 'deployment', start() {} });
    expect(() => registry.register({ name: 'deployment', start() {} })).toThrow(
      expect.objectContaining({ code: 'SKIFF_ERR_CONTROLLER_DUPLICATE', message: 'controller "deployment" is registered twice' }),
    );
  });

  it('rejects registrations without a name or a start function', () => {
    const registry = new ControllerRegistryImpl();
    expect(() => registry.register({ name: '', start() {} })).toThrow(expect.objectContaining({ code: 'SKIFF_ERR_CONTROLLER_INVALID' }));
    expect(() => registry.register({ name: 'x' } as never)).toThrow(/controller "x" has no start\(ctx\) function/);
  });
});
