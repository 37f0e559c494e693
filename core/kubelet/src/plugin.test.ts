import { describe, expect, it } from 'vitest';
import { Kernel } from '@skiff/kernel';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import kubelet from './index.js';

/** A request handler that never serves: enough for starts that fail before they talk to the API. */
const unavailable = { handle: async () => ({ status: 503 }) };

function kernelWith(options: Record<string, unknown>, apiHandler: boolean = true): Kernel {
  const kernel = new Kernel({ config: { nodes: 1, logLevel: 'silent' } }).use(kubelet, options).use(criSimulated).use(networkIpam);
  if (apiHandler) kernel.provide('apiHandler', unavailable);
  return kernel;
}

describe('the kubelet plugin', () => {
  it('fails the start with one line naming an unknown runtime and the known ones', async () => {
    await expect(kernelWith({ runtime: 'containerd' }).start()).rejects.toThrow(
      'component "@skiff/kubelet" failed to start: container runtime "containerd" is not registered (known: simulated)',
    );
  });

  it('does the same for an unknown network', async () => {
    await expect(kernelWith({ network: 'flannel' }).start()).rejects.toThrow('pod network "flannel" is not registered (known: ipam)');
  });

  it('does the same for an unknown service proxy', async () => {
    await expect(kernelWith({ serviceProxy: 'ipvs' }).start()).rejects.toThrow('service proxy "ipvs" is not registered (known: none)');
  });

  it('says plainly when there is no API server to talk to', async () => {
    await expect(kernelWith({}, false).start()).rejects.toThrow('plugin "@skiff/kubelet" needs component "apiHandler", which no loaded plugin provides');
  });

  it('checks its options when loaded', () => {
    expect(() => kernelWith({ capacity: { pods: 0 } })).toThrow('option "capacity.pods" must be >= 1');
    expect(() => kernelWith({ namePrefix: 'Node_' })).toThrow('option "namePrefix" must be a string matching');
    expect(() => kernelWith({ nodeIP: 'my-host' })).toThrow(`option "nodeIP" must be an IP address or 'host' (got "my-host")`);
  });
});
