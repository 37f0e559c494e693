import { describe, expect, it } from 'vitest';
import { NodePortAllocator, PortRange } from './node-ports.js';

describe('PortRange', () => {
  it('reads <low>-<high> and single ports, and refuses the rest', () => {
    expect(PortRange.parse('30000-32767')).toMatchObject({ base: 30000, size: 2768 });
    expect(PortRange.parse('8080').toString()).toBe('8080-8080');
    expect(() => PortRange.parse('32767-30000')).toThrow('invalid port range "32767-30000"');
    expect(() => PortRange.parse('0-10')).toThrow('within 1-65535');
  });
});

describe('NodePortAllocator', () => {
  it('hands out each port once, from a random start, until the range is full', () => {
    const ports = new NodePortAllocator(PortRange.parse('30000-30002'), () => 2);
    expect(ports.allocateNext('ns/a').value).toBe(30002);
    expect(ports.allocateNext('ns/b').value).toBe(30000);
    expect(ports.allocateNext('ns/c').value).toBe(30001);
    expect(() => ports.allocateNext('ns/d')).toThrow('range is full');
  });

  it('leaves the lowest min(max(16, size/32), 128) ports for requested ones until the rest is full', () => {
    const ports = new NodePortAllocator(PortRange.parse('30000-32767'), () => 0);
    expect(ports.reserved).toBe(86);
    expect(ports.allocateNext('ns/a').value).toBe(30086);
    const small = new NodePortAllocator(PortRange.parse('30000-30019'), () => 0);
    expect(small.reserved).toBe(16);
    for (let i = 0; i < 4; i++) small.allocateNext(`ns/${i}`);
    expect(small.allocateNext('ns/x').value).toBe(30000);
  });

  it('refuses a requested port another service holds or the range lacks, with upstream words', () => {
    const ports = new NodePortAllocator(PortRange.parse('30000-30099'));
    ports.allocate(30080, 'ns/a');
    expect(() => ports.allocate(30080, 'ns/b')).toThrow('provided port is already allocated');
    expect(() => ports.allocate(31000, 'ns/b')).toThrow('provided port is not in the valid range. The range of valid ports is 30000-30099');
    expect(ports.allocate(30080, 'ns/a').key).toBe('ns/a');
  });

  it('releases a holding only while it is still the one recorded', () => {
    const ports = new NodePortAllocator(PortRange.parse('30000-30099'));
    const first = ports.allocate(30080, 'ns/a');
    const again = ports.allocate(30080, 'ns/a');
    expect(ports.release(first)).toBe(false);
    expect(ports.holdings.get(30080)).toBe(again);
    expect(ports.release(again)).toBe(true);
    expect(ports.allocate(30080, 'ns/b').key).toBe('ns/b');
  });
});
