import { describe, expect, it } from 'vitest';
import { json } from './respond.js';

describe('json', () => {
  it('sends each distinct warning once, in order, as Warning: 299 values', () => {
    const response = json({}, 200, ['would violate "x"', 'second', 'would violate "x"']);
    expect(response.headers?.warning).toBe('299 - "would violate \\"x\\"", 299 - "second"');
    expect(json({}, 200, []).headers?.warning).toBeUndefined();
  });
});
