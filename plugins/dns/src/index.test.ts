import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type EndpointSlice, type Service } from '@skiff/api';
import { Kernel, KernelError } from '@skiff/kernel';
import { startTestCluster } from '@skiff/testing';
import { describe, expect, it } from 'vitest';
import plugin, { dnsServerOf, PLUGIN_NAME } from './index.js';
import { framed, queryPacket, udpExchange, udpQuery } from './test-support.js';

const load = (options: Record<string, unknown>) => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);

describe(PLUGIN_NAME, () => {
  it('loads into a kernel: name, version and kernel range check out', () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
    expect(kernel.has(PLUGIN_NAME)).toBe(true);
  });

  it('refuses bad options with one line naming the option', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ address: 'localhost' }, /option "address": want an IP address or 'host' \(got "localhost"\)/],
      [{ serviceIP: '10.96.0' }, /option "serviceIP": want an IP address/],
      [{ upstream: ['127.0.0.1', 'dns.example:53'] }, /option "upstream\[1\]": want 'IP', 'IP:port' or '\[IPv6\]:port' \(got "dns.example:53"\)/],
      [{ upstream: ['127.0.0.1:70000'] }, /option "upstream\[0\]"/],
      [{ clusterDomain: 'Cluster.Local.' }, /clusterDomain/],
      [{ port: 70000 }, /port/],
      [{ ttl: -1 }, /ttl/],
      [{ clients: ['10.0.0.0/8', '10.0.0.0/33'] }, /option "clients\[1\]": want an address or a CIDR such as 10.0.0.0\/8 \(got "10.0.0.0\/33"\)/],
    ];
    for (const [options, message] of cases) {
      let error: unknown;
      try {
        load(options);
      } catch (err) {
        error = err;
      }
      expect(error, JSON.stringify(options)).toBeInstanceOf(KernelError);
      expect((error as KernelError).code).toBe('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS');
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    }
    expect(() => load({ upstream: ['127.0.0.1:5353', '[::1]:53', '::1'], address: 'host' })).not.toThrow();
  });

  it('answers only its clients (and its own address): others get nothing, so a public address is no open resolver', async () => {
    const cluster = await startTestCluster({ plugins: [[plugin, { upstream: ['127.0.0.1:9'], clients: ['10.0.0.0/8'] }]] });
    try {
      const port = dnsServerOf(cluster.kernel)!.port;
      const query = queryPacket('kube-dns.kube-system.svc.cluster.local', 'A');
      expect(await udpExchange(port, query, 2000, '127.0.0.1')).toBeInstanceOf(Buffer);
      expect(await udpExchange(port, query, 500, '127.0.0.2')).toBeUndefined();
      const closed = await new Promise<boolean>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' });
        socket.on('close', () => resolve(true));
        socket.on('data', () => resolve(false));
        socket.on('error', () => undefined);
        socket.on('connect', () => socket.write(framed(query)));
      });
      expect(closed).toBe(true);
    } finally {
      await cluster.stop();
    }
  });

  it('after a restart (a new port) it serves again and corrects the kube-dns Service and EndpointSlice', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-dns-restart-'));
    try {
      const ports: number[] = [];
      for (let run = 0; run < 2; run++) {
        const cluster = await startTestCluster({ dataDir, plugins: [[plugin, { upstream: ['127.0.0.1:9'] }]] });
        try {
          const port = dnsServerOf(cluster.kernel)!.port;
          ports.push(port);
          const service = await cluster.client.get<Service>(RESOURCES.services, 'kube-dns', 'kube-system');
          expect(service.spec?.ports?.map((p) => p.targetPort)).toEqual([port, port]);
          const slice = await cluster.client.get<EndpointSlice>(RESOURCES.endpointslices, 'kube-dns-skiff', 'kube-system');
          expect(slice.ports?.map((p) => p.port)).toEqual([port, port]);
          expect((await udpQuery(port, 'kube-dns.kube-system.svc.cluster.local', 'A')).answers).toMatchObject([{ data: '10.96.0.10' }]);
        } finally {
          await cluster.stop();
        }
      }
      expect(ports[0]).not.toBe(ports[1]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
