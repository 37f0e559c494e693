import { describe, expect, it } from 'vitest';
import type { NetworkInterfaceInfo } from 'node:os';
import { hostAddress } from './host-address.js';

const v4 = (address: string, internal = false): NetworkInterfaceInfo =>
  ({ address, family: 'IPv4', internal, netmask: '255.255.255.0', mac: '00:00:00:00:00:00', cidr: `${address}/24` }) as NetworkInterfaceInfo;
const ROUTES_HEADER = 'Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n';

describe('hostAddress', () => {
  const interfaces = { lo: [v4('127.0.0.1', true)], skiff0: [v4('10.244.1.1')], eth0: [v4('192.0.2.2')] };

  it('takes the address of the interface the default route leaves by', () => {
    const routes = `${ROUTES_HEADER}skiff0\t0001F40A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\neth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n`;
    expect(hostAddress(undefined, interfaces, routes)).toBe('192.0.2.2');
  });

  it('falls back to the first non-loopback IPv4 address, then to 127.0.0.1', () => {
    expect(hostAddress(undefined, interfaces, ROUTES_HEADER)).toBe('10.244.1.1');
    expect(hostAddress(undefined, { lo: [v4('127.0.0.1', true)] }, '')).toBe('127.0.0.1');
  });

  it('gives the advertised address when there is one', () => {
    expect(hostAddress('198.51.100.7', interfaces, '')).toBe('198.51.100.7');
  });

  it('reads this machine when given nothing', () => {
    expect(hostAddress()).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });
});
