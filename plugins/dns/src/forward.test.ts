import { createSocket, type Socket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import type { Answer } from 'dns-packet';
import { Kernel } from '@skiff/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Forwarder } from './forwarder.js';
import { parseUpstream } from './options.js';
import { Responder } from './responder.js';
import { DnsServer } from './server.js';
import { decode, framed, queryPacket, tcpExchange, TestUpstream, udpExchange, udpQuery } from './test-support.js';
import { ZoneIndex } from './zone.js';

const logger = new Kernel({ config: { logLevel: 'silent' } }).logger;
const a = (name: string, ip: string, ttl = 60): Answer => ({ name, type: 'A', ttl, class: 'IN', data: ip });
const soa = (name: string, minimum: number): Answer => ({
  name,
  type: 'SOA',
  ttl: 300,
  class: 'IN',
  data: { mname: `ns.${name}`, rname: `hostmaster.${name}`, serial: 1, refresh: 60, retry: 60, expire: 60, minimum },
});
const many = (name: string, count: number) => Array.from({ length: count }, (_, i) => a(name, `192.0.2.${i + 1}`));

/** The plugin's server over an empty cluster zone, forwarding to `upstream`. */
async function startServer(upstream: string[], timeoutMs = 2000) {
  const forwarder = new Forwarder({ upstream: upstream.map((text) => parseUpstream(text)!), cacheSize: 100, maxCacheSeconds: 30, timeoutMs, logger });
  const zone = new ZoneIndex({ domain: 'cluster.local', ttl: 5, serviceIP: '10.96.0.10' });
  const server = new DnsServer(new Responder(zone, forwarder, 100), logger);
  await server.listen('127.0.0.1', 0);
  const resolver = new Resolver({ timeout: 3000, tries: 1 });
  resolver.setServers([`127.0.0.1:${server.port}`]);
  return {
    port: server.port,
    resolver,
    forwarder,
    async close() {
      await server.close();
      forwarder.close();
    },
  };
}

describe('forwarding names outside the cluster to a test upstream on loopback', () => {
  let upstream: TestUpstream;
  let silent: Socket;
  let dns: Awaited<ReturnType<typeof startServer>>;

  beforeAll(async () => {
    upstream = await new TestUpstream({
      'www.example.test': { answers: [a('www.example.test', '192.0.2.10')] },
      'cached.example.test': { answers: [a('cached.example.test', '192.0.2.11')] },
      'slow.example.test': { answers: [a('slow.example.test', '192.0.2.12')], delayMs: 300 },
      'missing.example.test': { answers: [], rcode: 'NXDOMAIN', authorities: [soa('example.test', 60)] },
      'gone.example.test': { drop: true },
      'big.example.test': { truncate: true, answers: many('big.example.test', 40) },
      '10.2.0.192.in-addr.arpa': { answers: [{ name: '10.2.0.192.in-addr.arpa', type: 'PTR', ttl: 60, class: 'IN', data: 'www.example.test' }] },
    }).start();
    // An upstream that never answers, listed first: the forwarder must move on to the next one.
    silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    dns = await startServer([`127.0.0.1:${silent.address().port}`, `127.0.0.1:${upstream.port}`], 1000);
  });

  afterAll(async () => {
    await dns?.close();
    await upstream?.stop();
    silent?.close();
  });

  it('answers from the upstream, after the silent first server timed out', async () => {
    expect(await dns.resolver.resolve4('www.example.test')).toEqual(['192.0.2.10']);
    expect(upstream.count('www.example.test', 'udp')).toBe(1);
  });

  it('serves a repeated question from its cache: the upstream sees one query', async () => {
    await dns.resolver.resolve4('cached.example.test');
    const again = await udpQuery(dns.port, 'cached.example.test', 'A', { id: 7 });
    expect(again.id).toBe(7);
    expect(again.answers).toMatchObject([{ name: 'cached.example.test', data: '192.0.2.11' }]);
    expect(again.answers![0]!.ttl).toBeLessThanOrEqual(60);
    expect(upstream.count('cached.example.test')).toBe(1);
  });

  it('echoes the question as asked (0x20 mixed case), answered from the same cache entry', async () => {
    const answer = await udpQuery(dns.port, 'CaChEd.ExAmPlE.tEsT', 'A');
    expect(answer.questions![0]!.name).toBe('CaChEd.ExAmPlE.tEsT');
    expect(upstream.count('cached.example.test')).toBe(1);
  });

  it('shares one upstream query among clients asking the same question at once', async () => {
    const answers = await Promise.all([1, 2, 3, 4, 5].map((id) => udpQuery(dns.port, 'slow.example.test', 'A', { id })));
    expect(answers.map((answer) => answer.id)).toEqual([1, 2, 3, 4, 5]);
    for (const answer of answers) expect(answer.answers).toMatchObject([{ data: '192.0.2.12' }]);
    expect(upstream.count('slow.example.test')).toBe(1);
  });

  it('caches a negative answer for its SOA minimum', async () => {
    await expect(dns.resolver.resolve4('missing.example.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    const again = await udpQuery(dns.port, 'missing.example.test', 'A');
    expect(again.rcode).toBe('NXDOMAIN');
    expect(again.authorities).toMatchObject([{ type: 'SOA' }]);
    expect(upstream.count('missing.example.test')).toBe(1);
  });

  it('answers SERVFAIL when no upstream answers in time', async () => {
    const started = Date.now();
    const answer = await udpQuery(dns.port, 'gone.example.test', 'A');
    expect(answer.rcode).toBe('SERVFAIL');
    expect(Date.now() - started).toBeLessThan(1900);
    expect(upstream.count('gone.example.test', 'udp')).toBeGreaterThanOrEqual(1);
  });

  it('asks again over TCP when the UDP answer is truncated, and hands a UDP client TC when it does not fit', async () => {
    const small = await udpQuery(dns.port, 'big.example.test', 'A');
    expect(small.flag_tc).toBe(true);
    expect(small.answers).toEqual([]);
    expect(upstream.count('big.example.test', 'udp')).toBe(1);
    expect(upstream.count('big.example.test', 'tcp')).toBe(1);
    // Node's resolver (c-ares) retries over TCP on TC; the answer then comes from the cache.
    expect(await dns.resolver.resolve4('big.example.test')).toHaveLength(40);
    const edns = await udpQuery(dns.port, 'big.example.test', 'A', { udpSize: 4096 });
    expect(edns.flag_tc).toBe(false);
    expect(edns.answers).toHaveLength(40);
    expect(edns.additionals).toMatchObject([{ type: 'OPT' }]);
    expect(upstream.count('big.example.test')).toBe(2);
  });

  it('forwards over TCP for a TCP client, several queries on one connection', async () => {
    const { answers } = await tcpExchange(
      dns.port,
      Buffer.concat([framed(queryPacket('www.example.test', 'A', { id: 1 })), framed(queryPacket('10.2.0.192.in-addr.arpa', 'PTR', { id: 2 }))]),
      2,
    );
    const decoded = answers.map((answer) => decode(answer)).sort((x, y) => x.id! - y.id!);
    expect(decoded.map((answer) => answer.id)).toEqual([1, 2]);
    expect(decoded[1]!.answers).toMatchObject([{ type: 'PTR', data: 'www.example.test' }]);
    expect(upstream.count('10.2.0.192.in-addr.arpa', 'tcp')).toBe(1);
  });

  it('answers SERVFAIL without upstreams at all', async () => {
    const none = await startServer([]);
    try {
      expect((await udpQuery(none.port, 'www.example.test', 'A')).rcode).toBe('SERVFAIL');
    } finally {
      await none.close();
    }
  });

  it('ignores a datagram that is not a query and keeps serving', async () => {
    expect(await udpExchange(dns.port, Buffer.from('not a dns message at all'), 300)).toBeUndefined();
    expect(await udpExchange(dns.port, queryPacket('www.example.test', 'A').subarray(0, 20), 300)).toBeUndefined();
    expect((await udpQuery(dns.port, 'www.example.test', 'A')).answers).toHaveLength(1);
  });
});
