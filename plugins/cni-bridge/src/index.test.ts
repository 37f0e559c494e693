import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kernel, recordingLogger, type NetworkFactory } from '@skiff/kernel';
import plugin from './index.js';
import { BridgeNetwork } from './network.js';

const load = (options: Record<string, unknown>) => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);

describe('options', () => {
  it('registers the bridge network with the defaults', () => {
    const factories: NetworkFactory[] = [];
    load({}).hooks.networks.call({ register: (f) => void factories.push(f), get: () => undefined, list: () => factories });
    expect(factories.map((f) => f.name)).toEqual(['bridge']);
  });

  it('names the plugin, the option and what was expected', () => {
    expect(() => load({ clusterCIDR: 10 })).toThrow('plugin "@skiff/plugin-cni-bridge": option "clusterCIDR" must be a string (got 10)');
    expect(() => load({ bridgeName: 'br 0' })).toThrow('option "bridgeName" must be a string matching');
    expect(() => load({ dns: { nameservers: '1.1.1.1' } })).toThrow('option "dns.nameservers" must be an array');
    expect(() => load({ clusterCIDR: '10.250.0.1/16' })).toThrow(
      'plugin "@skiff/plugin-cni-bridge": invalid clusterCIDR "10.250.0.1/16": the host bits are set (did you mean 10.250.0.0/16?)',
    );
    expect(() => load({ clusterCIDR: '10.250.0.0/16', nodeCIDRMaskSize: 12 })).toThrow('option "nodeCIDRMaskSize" must be >= the prefix of clusterCIDR (16)');
  });
});

describe('creating a node network', () => {
  let dataDir: string;
  const options = { clusterCIDR: '10.250.0.0/16', nodeCIDRMaskSize: 24, binDir: '/usr/lib/cni', bridgeName: 'skifft', hairpinMode: true, ipMasq: true };
  const node = () => ({ nodeName: 'node-1', index: 0, dataDir, logger: recordingLogger() });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'skiff-cni-create-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('needs root', async () => {
    await expect(BridgeNetwork.create(node(), options, { uid: 1000 })).rejects.toThrow(
      'the bridge network needs root (CNI plugins create interfaces and iptables rules); this process runs as uid 1000',
    );
  });

  it('says where the plugins were looked for and how to install them', async () => {
    await expect(BridgeNetwork.create(node(), { ...options, binDir: dataDir }, { uid: 0 })).rejects.toMatchObject({
      code: 'SKIFF_ERR_CNI_PLUGIN_MISSING',
      message: `CNI plugin bridge not found in ${dataDir}: install Debian's containernetworking-plugins (scripts/install-system-deps.sh)`,
    });
  });

  it('keeps bridge names within 15 characters', async () => {
    await expect(BridgeNetwork.create({ ...node(), index: 12 }, { ...options, bridgeName: 'skiff-cluster-' }, { uid: 0 })).rejects.toThrow(
      'bridge name "skiff-cluster-12" has 16 characters: interface names hold at most 15 (shorten option bridgeName)',
    );
  });
});
