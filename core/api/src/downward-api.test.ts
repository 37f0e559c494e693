import { describe, expect, it } from 'vitest';
import { containerResourceValue, formatDownwardMap, goQuote, metadataFieldValue } from './downward-api.js';

const metadata = { name: 'web', namespace: 'shop', uid: 'u-1', labels: { tier: 'front', app: 'web' }, annotations: { 'a.b/c': 'x"y' } };

describe('the downward API', () => {
  it('reads metadata fields, subscripts included', () => {
    expect(metadataFieldValue(metadata, 'metadata.name')).toBe('web');
    expect(metadataFieldValue(metadata, 'metadata.namespace')).toBe('shop');
    expect(metadataFieldValue(metadata, 'metadata.uid')).toBe('u-1');
    expect(metadataFieldValue(metadata, 'metadata.labels')).toBe('app="web"\ntier="front"');
    expect(metadataFieldValue(metadata, "metadata.labels['tier']")).toBe('front');
    expect(metadataFieldValue(metadata, "metadata.annotations['a.b/c']")).toBe('x"y');
    expect(metadataFieldValue(metadata, "metadata.labels['none']")).toBe('');
    expect(() => metadataFieldValue(metadata, 'spec.nodeName')).toThrow('unsupported fieldPath: spec.nodeName');
  });

  it("quotes values as Go's %q does", () => {
    expect(goQuote('tab\there "q" \\ \x01 é')).toBe('"tab\\there \\"q\\" \\\\ \\x01 é"');
    expect(formatDownwardMap(undefined)).toBe('');
  });

  it('divides container resources by the divisor, rounding up; unset limits are the node allocatable', () => {
    const container = { name: 'app', resources: { requests: { cpu: '250m', memory: '100Mi' }, limits: { memory: '1Gi' } } };
    const allocatable = { cpu: '3', memory: '8Gi' };
    expect(containerResourceValue({ resource: 'requests.cpu' }, container, allocatable)).toBe('1');
    expect(containerResourceValue({ resource: 'requests.cpu', divisor: '1m' }, container, allocatable)).toBe('250');
    expect(containerResourceValue({ resource: 'limits.cpu' }, container, allocatable)).toBe('3');
    expect(containerResourceValue({ resource: 'limits.memory', divisor: '1Mi' }, container, allocatable)).toBe('1024');
    expect(containerResourceValue({ resource: 'requests.memory' }, container, allocatable)).toBe(String(100 * 1024 * 1024));
    expect(containerResourceValue({ resource: 'requests.ephemeral-storage' }, container, allocatable)).toBe('0');
    expect(() => containerResourceValue({ resource: 'limits.gpu' }, container)).toThrow('unsupported container resource : limits.gpu');
  });
});
