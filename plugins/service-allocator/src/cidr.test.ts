import { describe, expect, it } from 'vitest';
import { canonicalIP, familyOf, ServiceCIDR } from './cidr.js';

describe('ServiceCIDR', () => {
  it('hands out everything but the network and broadcast addresses of an IPv4 range', () => {
    const range = new ServiceCIDR('10.96.0.0/12');
    expect(range.family).toBe('IPv4');
    expect(range.at(0n)).toBe('10.96.0.1');
    expect(range.at(range.size - 1n)).toBe('10.111.255.254');
    expect(range.size).toBe(2n ** 20n - 2n);
    expect(range.contains('10.96.0.0')).toBe(false);
    expect(range.contains('10.111.255.255')).toBe(false);
    expect(range.containsPrefix('10.111.255.255')).toBe(true);
    expect(range.contains('10.112.0.1')).toBe(false);
    expect(range.contains('fd00::1')).toBe(false);
  });

  it('keeps the broadcast address of an IPv6 range, which has none', () => {
    const range = new ServiceCIDR('fd00:10:96::/112');
    expect(range.at(0n)).toBe('fd00:10:96::1');
    expect(range.at(range.size - 1n)).toBe('fd00:10:96::ffff');
    expect(range.contains('fd00:10:96::ffff')).toBe(true);
  });

  it('reserves min(max(16, size/16), 256) low addresses for requested IPs (KEP-3070)', () => {
    expect(new ServiceCIDR('10.96.0.0/12').reserved).toBe(256n);
    expect(new ServiceCIDR('10.0.0.0/24').reserved).toBe(16n);
    expect(new ServiceCIDR('10.0.0.0/20').reserved).toBe(256n);
    expect(new ServiceCIDR('10.0.0.0/28').reserved).toBe(0n);
  });

  it('offers the upper part first, from a random point and wrapping, then the reserved part', () => {
    const range = new ServiceCIDR('10.0.0.0/24');
    const order = [...range.candidates((below) => below - 1n)];
    expect(order).toHaveLength(254);
    expect(order.slice(0, 2)).toEqual(['10.0.0.254', '10.0.0.17']);
    expect(order.slice(237, 239)).toEqual(['10.0.0.253', '10.0.0.16']);
    expect(order.at(-1)).toBe('10.0.0.15');
    expect(new Set(order).size).toBe(254);
  });

  it('refuses what is not a network address, with the one that would be', () => {
    expect(() => new ServiceCIDR('10.96.0.1/12')).toThrow('10.96.0.1/12 is not a network address (did you mean 10.96.0.0/12?)');
    expect(() => new ServiceCIDR('10.96.0.0')).toThrow('invalid CIDR address: 10.96.0.0');
    expect(() => new ServiceCIDR('10.96.0.0/33')).toThrow('invalid CIDR address');
  });
});

describe('addresses', () => {
  it('prints IPv6 addresses in their canonical, shortest form', () => {
    expect(canonicalIP('fd00:0:0:0:0:0:0:1')).toBe('fd00::1');
    expect(canonicalIP('FD00:0000::00A0')).toBe('fd00::a0');
    expect(canonicalIP('2001:db8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1');
    expect(canonicalIP('10.0.0.1')).toBe('10.0.0.1');
    expect(canonicalIP('10.0.0')).toBeUndefined();
    expect(familyOf('::1')).toBe('IPv6');
  });
});
