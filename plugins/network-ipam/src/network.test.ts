import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NetworkAttachment } from '@skiff/kernel';
import { nodeSubnet, parseCidr } from './cidr.js';
import { IpamNetwork } from './network.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-ipam-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const attachment = (containerId: string, podUid = `uid-${containerId}`, preferredIP?: string): NetworkAttachment => ({
  containerId,
  netnsPath: `/var/run/netns/${containerId}`,
  ifName: 'eth0',
  podName: `pod-${containerId}`,
  podNamespace: 'default',
  podUid,
  ...(preferredIP ? { preferredIP } : {}),
});

const open = (subnet = '10.244.1.0/24') => IpamNetwork.open(parseCidr(subnet), dataDir);
const ipOf = (result: { ips: { address: string }[] }) => result.ips[0]!.address.split('/')[0];

describe('node subnets', () => {
  it('gives node i the (i+1)-th /24 of the cluster CIDR', () => {
    expect(nodeSubnet('10.244.0.0/16', 0, 24)).toEqual(parseCidr('10.244.1.0/24'));
    expect(nodeSubnet('10.244.0.0/16', 2, 24)).toEqual(parseCidr('10.244.3.0/24'));
  });

  it('says when the cluster CIDR has no block left for a node', () => {
    expect(() => nodeSubnet('10.244.0.0/23', 1, 24)).toThrow('node 1 has no subnet: 10.244.0.0/23 holds 1 /24 node subnets');
  });

  it('rejects malformed CIDRs with the option named', () => {
    expect(() => nodeSubnet('10.244.0.0', 0, 24)).toThrow('invalid clusterCIDR "10.244.0.0"');
    expect(() => nodeSubnet('10.244.3.0/16', 0, 24)).toThrow('did you mean 10.244.0.0/16?');
  });
});

describe('IpamNetwork', () => {
  it('hands out addresses after the gateway, with the gateway and the interface in the result', async () => {
    const network = await open();
    expect(network.podCIDR()).toBe('10.244.1.0/24');
    const result = await network.add(attachment('a'));
    expect(result).toMatchObject({
      cniVersion: '1.0.0',
      ips: [{ address: '10.244.1.2/24', gateway: '10.244.1.1' }],
      interfaces: [{ name: 'eth0', sandbox: '/var/run/netns/a', mac: '0a:58:0a:f4:01:02' }],
    });
    expect(ipOf(await network.add(attachment('b')))).toBe('10.244.1.3');
  });

  it('records each address in a file holding the container id, like host-local', async () => {
    const network = await open();
    await network.add(attachment('abc'));
    const text = await readFile(join(dataDir, 'ipam', '10.244.1.2'), 'utf8');
    expect(text.split('\r\n').slice(0, 2)).toEqual(['abc', 'eth0']);
  });

  it('returns the same address when a container asks again', async () => {
    const network = await open();
    const first = ipOf(await network.add(attachment('a')));
    expect(ipOf(await network.add(attachment('a')))).toBe(first);
    expect((await readdir(join(dataDir, 'ipam'))).filter((f) => f.startsWith('10.'))).toHaveLength(1);
  });

  it('keeps allocations across instances and never hands one out twice', async () => {
    const before = await open();
    const a = ipOf(await before.add(attachment('a')));
    const after = await open();
    expect(ipOf(await after.add(attachment('a')))).toBe(a);
    expect(ipOf(await after.add(attachment('b')))).not.toBe(a);
  });

  it('gives many concurrent adds distinct addresses', async () => {
    const network = await open();
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => network.add(attachment(`c${i}`))));
    expect(new Set(results.map(ipOf)).size).toBe(40);
  });

  it('releases on del, and del of an unknown container is a no-op', async () => {
    const network = await open('10.244.1.0/29');
    await network.add(attachment('a'));
    await network.del(attachment('a'));
    await network.del(attachment('a'));
    await expect(network.check(attachment('a'))).rejects.toThrow('holds no address');
    expect((await readdir(join(dataDir, 'ipam'))).filter((f) => f.startsWith('10.'))).toEqual([]);
  });

  it('goes round the range rather than reusing a just-freed address', async () => {
    const network = await open('10.244.1.0/29');
    await network.add(attachment('a'));
    await network.del(attachment('a'));
    expect(ipOf(await network.add(attachment('b')))).toBe('10.244.1.3');
  });

  it('fails with host-local’s message when the range is exhausted, and recovers after a release', async () => {
    const network = await open('10.244.1.0/29');
    for (const id of ['a', 'b', 'c', 'd', 'e']) await network.add(attachment(id));
    await expect(network.add(attachment('f'))).rejects.toThrow('no IP addresses available in range set: 10.244.1.2-10.244.1.6');
    await network.del(attachment('c'));
    expect(ipOf(await network.add(attachment('f')))).toBe('10.244.1.4');
  });

  it('honours a preferred address when it is free', async () => {
    const network = await open();
    expect(ipOf(await network.add(attachment('a', 'uid-a', '10.244.1.77')))).toBe('10.244.1.77');
  });

  it('lets the same pod take its address back from its lost sandbox, but not another pod', async () => {
    const first = await open();
    const ip = ipOf(await first.add(attachment('old-sandbox', 'pod-uid')));
    const restarted = await open();
    expect(ipOf(await restarted.add(attachment('new-sandbox', 'pod-uid', ip)))).toBe(ip);
    const text = await readFile(join(dataDir, 'ipam', ip!), 'utf8');
    expect(text.split('\r\n')[0]).toBe('new-sandbox');
    expect(ipOf(await restarted.add(attachment('intruder', 'other-uid', ip)))).not.toBe(ip);
  });

  it('ignores a preferred address outside its range', async () => {
    const network = await open();
    expect(ipOf(await network.add(attachment('a', 'uid-a', '10.244.9.9')))).toBe('10.244.1.2');
    expect(ipOf(await network.add(attachment('b', 'uid-b', '10.244.1.1')))).toBe('10.244.1.3');
  });
});
