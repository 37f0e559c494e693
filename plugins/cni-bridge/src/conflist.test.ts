import { describe, expect, it } from 'vitest';
import { nodeSubnet, parseCidr } from './cidr.js';
import { bridgeConflist, loopbackConflist, pluginInput, portMappingsOf, toNetworkResult } from './conflist.js';
import type { CniResult } from './types.js';

const settings = {
  networkName: 'skiff0',
  bridge: 'skiff0',
  subnet: '10.244.1.0/24',
  ipamDataDir: '/data/node-1/cni/networks',
  hairpinMode: true,
  ipMasq: true,
};

const bridgeResult: CniResult = {
  cniVersion: '1.0.0',
  interfaces: [{ name: 'skiff0', mac: '82:ac:cf:e1:c4:06' }, { name: 'veth1234' }, { name: 'eth0', mac: '52:d5:64:a0:5e:44', sandbox: '/var/run/netns/p' }],
  ips: [{ interface: 2, address: '10.244.1.2/24', gateway: '10.244.1.1' }],
  routes: [{ dst: '0.0.0.0/0', gw: '10.244.1.1' }],
  dns: { nameservers: ['10.96.0.10'], search: ['default.svc.cluster.local'], options: ['ndots:5'] },
};

describe('node subnets', () => {
  it('gives node i the (i+1)-th block of the cluster CIDR, as the ipam network does', () => {
    expect(nodeSubnet('10.244.0.0/16', 0, 24)).toEqual(parseCidr('10.244.1.0/24'));
    expect(nodeSubnet('10.250.0.0/16', 3, 24)).toEqual(parseCidr('10.250.4.0/24'));
  });

  it('says when a node has no block left or a CIDR is malformed', () => {
    expect(() => nodeSubnet('10.244.0.0/23', 1, 24)).toThrow('node 1 has no subnet: 10.244.0.0/23 holds 1 /24 node subnets');
    expect(() => parseCidr('10.244.0.1/16', 'clusterCIDR')).toThrow('invalid clusterCIDR "10.244.0.1/16": the host bits are set (did you mean 10.244.0.0/16?)');
    expect(() => parseCidr('10.244/16', 'clusterCIDR')).toThrow('expected an IPv4 CIDR such as 10.244.0.0/16');
  });
});

describe('the network configuration list', () => {
  it('chains bridge (host-local IPAM under the node dataDir) and portmap', () => {
    expect(bridgeConflist(settings)).toEqual({
      cniVersion: '1.0.0',
      name: 'skiff0',
      plugins: [
        {
          type: 'bridge',
          bridge: 'skiff0',
          isGateway: true,
          isDefaultGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: '10.244.1.0/24' }]], dataDir: '/data/node-1/cni/networks' },
        },
        { type: 'portmap', capabilities: { portMappings: true }, snat: true },
      ],
    });
  });

  it('carries mtu and dns only when set', () => {
    const bridge = bridgeConflist({ ...settings, mtu: 1400, dns: { nameservers: ['10.96.0.10'], search: ['svc.cluster.local'] } }).plugins[0]!;
    expect(bridge.mtu).toBe(1400);
    expect(bridge.dns).toEqual({ nameservers: ['10.96.0.10'], search: ['svc.cluster.local'] });
  });

  it('runs loopback as a network of its own', () => {
    expect(loopbackConflist()).toEqual({ cniVersion: '1.0.0', name: 'cni-loopback', plugins: [{ type: 'loopback' }] });
  });
});

describe('plugin input', () => {
  const list = bridgeConflist(settings);
  const portMappings = [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }];

  it('adds the list name and version, and prevResult when there is one', () => {
    const input = pluginInput(list, list.plugins[0]!, { runtimeConfig: { portMappings }, prevResult: bridgeResult });
    expect(input).toMatchObject({ type: 'bridge', name: 'skiff0', cniVersion: '1.0.0', prevResult: bridgeResult });
    expect(input).not.toHaveProperty('runtimeConfig');
  });

  it('hands runtime config only to plugins with the capability', () => {
    expect(pluginInput(list, list.plugins[1]!, { runtimeConfig: { portMappings } })).toEqual({
      type: 'portmap',
      capabilities: { portMappings: true },
      snat: true,
      name: 'skiff0',
      cniVersion: '1.0.0',
      runtimeConfig: { portMappings },
    });
  });

  it('turns the pod host ports into CNI port mappings', () => {
    expect(
      portMappingsOf({
        portMappings: [
          { containerPort: 80, hostPort: 8080 },
          { protocol: 'UDP', containerPort: 53, hostPort: 5353, hostIp: '127.0.0.1' },
          { protocol: 'TCP', containerPort: 9090 },
          { containerPort: 9091, hostPort: 0 },
        ],
      }),
    ).toEqual([
      { hostPort: 8080, containerPort: 80, protocol: 'tcp' },
      { hostPort: 5353, containerPort: 53, protocol: 'udp', hostIP: '127.0.0.1' },
    ]);
    expect(portMappingsOf({})).toEqual([]);
  });
});

describe('results', () => {
  it('keeps the sandbox addresses, the interfaces and the DNS of a CNI result', () => {
    expect(toNetworkResult(bridgeResult)).toEqual({
      cniVersion: '1.0.0',
      interfaces: [{ name: 'skiff0', mac: '82:ac:cf:e1:c4:06' }, { name: 'veth1234' }, { name: 'eth0', mac: '52:d5:64:a0:5e:44', sandbox: '/var/run/netns/p' }],
      ips: [{ address: '10.244.1.2/24', gateway: '10.244.1.1' }],
      dns: { nameservers: ['10.96.0.10'], search: ['default.svc.cluster.local'] },
    });
  });

  it('drops addresses of host-side interfaces', () => {
    const result = toNetworkResult({ ...bridgeResult, ips: [{ interface: 0, address: '10.244.1.1/24' }, ...bridgeResult.ips!] });
    expect(result.ips).toEqual([{ address: '10.244.1.2/24', gateway: '10.244.1.1' }]);
  });
});
