import { describe, expect, it } from 'vitest';
import { cidrOptionReaders, formatCidr, intToIp, ipToInt, isHostAddress, nodeSubnet, parseIpv4Cidr, type Ipv4Cidr } from './ipv4.js';

const cidr = (text: string): Ipv4Cidr => {
  const parsed = parseIpv4Cidr(text);
  if (!('cidr' in parsed)) throw new Error(parsed.problem);
  return parsed.cidr;
};

describe('IPv4 addresses and CIDRs', () => {
  it('converts addresses both ways and refuses what is not one', () => {
    expect(ipToInt('10.244.1.2')).toBe(0x0af40102);
    expect(intToIp(0x0af40102)).toBe('10.244.1.2');
    expect(intToIp(0xffffffff)).toBe('255.255.255.255');
    for (const bad of ['10.244.1', '10.244.1.256', '10.a.1.2', '', '1.2.3.4.5']) expect(ipToInt(bad)).toBeUndefined();
  });

  it('parses CIDRs and says what is wrong with the others', () => {
    expect(formatCidr(cidr('10.244.0.0/16'))).toBe('10.244.0.0/16');
    expect(parseIpv4Cidr('10.244.0.0')).toEqual({ problem: 'expected an IPv4 CIDR such as 10.244.0.0/16' });
    expect(parseIpv4Cidr('10.244.0.0/33')).toEqual({ problem: 'expected an IPv4 CIDR such as 10.244.0.0/16' });
    expect(parseIpv4Cidr('10.244.1.0/16')).toEqual({ problem: 'the host bits are set (did you mean 10.244.0.0/16?)' });
  });

  it('tells host addresses of a block from its network and broadcast addresses', () => {
    const block = cidr('10.244.1.0/24');
    expect(isHostAddress('10.244.1.1', block)).toBe(true);
    expect(isHostAddress('10.244.1.254', block)).toBe(true);
    expect(isHostAddress('10.244.1.0', block)).toBe(false);
    expect(isHostAddress('10.244.1.255', block)).toBe(false);
    expect(isHostAddress('10.244.2.1', block)).toBe(false);
  });

  it("gives node i the (i + 1)-th block of the cluster's range", () => {
    const cluster = cidr('10.244.0.0/16');
    expect(nodeSubnet(cluster, 0, 24)).toEqual({ subnet: cidr('10.244.1.0/24') });
    expect(nodeSubnet(cluster, 254, 24)).toEqual({ subnet: cidr('10.244.255.0/24') });
    expect(nodeSubnet(cluster, 255, 24)).toEqual({ problem: 'range', blocks: 255 });
    expect(nodeSubnet(cluster, 0, 8)).toEqual({ problem: 'mask', blocks: 0 });
  });

  it("reads a network's CIDR options, refusing them with the network's own errors", () => {
    const readers = cidrOptionReaders({
      invalid: (problem) => new Error(`invalid ${problem.what} "${problem.value}": ${problem.detail}`),
      outOfRange: (problem) =>
        new Error(`node ${problem.index} has no subnet: ${problem.clusterCIDR} holds ${problem.count} /${problem.maskSize} node subnets`),
    });
    expect(readers.parseCidr('10.244.0.0/16')).toEqual(cidr('10.244.0.0/16'));
    expect(() => readers.parseCidr('10.244.0.1/16', 'clusterCIDR')).toThrow(
      'invalid clusterCIDR "10.244.0.1/16": the host bits are set (did you mean 10.244.0.0/16?)',
    );
    expect(() => readers.parseCidr('10.244/16')).toThrow('invalid CIDR "10.244/16": expected an IPv4 CIDR such as 10.244.0.0/16');
    expect(readers.nodeSubnet('10.244.0.0/16', 0, 24)).toEqual(cidr('10.244.1.0/24'));
    expect(() => readers.nodeSubnet('10.244.0.0/16', 0, 8)).toThrow('invalid nodeCIDRMaskSize "8": must be between 16 and 30');
    expect(() => readers.nodeSubnet('10.244.0.0/23', 1, 24)).toThrow('node 1 has no subnet: 10.244.0.0/23 holds 1 /24 node subnets');
    expect(() => readers.nodeSubnet('10.244.0.1/16', 0, 24)).toThrow('invalid clusterCIDR "10.244.0.1/16"');
  });
});
