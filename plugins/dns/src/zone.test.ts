import { describe, expect, it } from 'vitest';
import { addressFromDashed, dashedAddress, reverseName } from './addresses.js';
import { nameserversOf, parseUpstream } from './options.js';
import { QTYPE, RCODE } from './wire.js';
import { ZoneIndex } from './zone.js';

describe('addresses in names', () => {
  it('reverse names: in-addr.arpa and nibble-wise ip6.arpa', () => {
    expect(reverseName('10.96.0.10')).toBe('10.0.96.10.in-addr.arpa');
    expect(reverseName('fd00::1')).toBe(`1.${'0.'.repeat(27)}0.0.d.f.ip6.arpa`);
    expect(reverseName('::ffff:1.2.3.4')).toBe(reverseName('0:0:0:0:0:ffff:102:304'));
    expect(reverseName('nope')).toBeUndefined();
  });

  it('dashed addresses, both ways', () => {
    expect(addressFromDashed('10-244-1-7')).toEqual({ ip: '10.244.1.7', family: 4 });
    expect(addressFromDashed('fd00--7')).toEqual({ ip: 'fd00::7', family: 6 });
    expect(addressFromDashed('web')).toBeUndefined();
    expect(addressFromDashed('10-244-1')).toBeUndefined();
    expect(dashedAddress('FD00::7')).toBe('fd00--7');
  });

  it('upstream addresses and resolv.conf nameservers', () => {
    expect(parseUpstream('192.0.2.1')).toEqual({ address: '192.0.2.1', port: 53, family: 4 });
    expect(parseUpstream('192.0.2.1:5353')).toEqual({ address: '192.0.2.1', port: 5353, family: 4 });
    expect(parseUpstream('[2001:db8::1]:5353')).toEqual({ address: '2001:db8::1', port: 5353, family: 6 });
    expect(parseUpstream('2001:db8::1')).toEqual({ address: '2001:db8::1', port: 53, family: 6 });
    expect(parseUpstream('example.com')).toBeUndefined();
    expect(nameserversOf('# comment\nsearch x\nnameserver 192.0.2.53\nnameserver   2001:db8::53\nnameserver bogus\n')).toEqual([
      { address: '192.0.2.53', port: 53, family: 4 },
      { address: '2001:db8::53', port: 53, family: 6 },
    ]);
  });
});

describe('the zone index', () => {
  const zone = () => new ZoneIndex({ domain: 'cluster.local', ttl: 5, serviceIP: '10.96.0.10' });
  const svc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'ns' }, spec });

  it('keeps names per Service: a delete removes exactly that Service’s names and the empty non-terminals above them', () => {
    const index = zone();
    index.setService(svc('a', { clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80 }] }));
    index.setService(svc('b', { clusterIP: '10.96.0.21' }));
    expect(index.lookup('a.ns.svc.cluster.local', QTYPE.A)!.answers).toMatchObject([{ data: '10.96.0.20' }]);
    expect(index.lookup('_tcp.a.ns.svc.cluster.local', QTYPE.A)!.rcode).toBe(RCODE.NOERROR);
    index.deleteService(svc('a', {}));
    expect(index.lookup('a.ns.svc.cluster.local', QTYPE.A)!.rcode).toBe(RCODE.NXDOMAIN);
    expect(index.lookup('_tcp.a.ns.svc.cluster.local', QTYPE.A)!.rcode).toBe(RCODE.NXDOMAIN);
    expect(index.lookup('20.0.96.10.in-addr.arpa', QTYPE.PTR)).toBeUndefined();
    expect(index.lookup('ns.svc.cluster.local', QTYPE.A)!.rcode).toBe(RCODE.NOERROR);
    index.deleteService(svc('b', {}));
    expect(index.lookup('ns.svc.cluster.local', QTYPE.A)!.rcode).toBe(RCODE.NXDOMAIN);
  });

  it('names outside the domain are not its own, except reverse names it knows', () => {
    const index = zone();
    index.setService(svc('a', { clusterIP: '10.96.0.20' }));
    expect(index.lookup('example.com', QTYPE.A)).toBeUndefined();
    expect(index.lookup('20.0.96.10.in-addr.arpa', QTYPE.PTR)!.answers).toMatchObject([{ data: 'a.ns.svc.cluster.local' }]);
    expect(index.lookup('20.0.96.10.in-addr.arpa', QTYPE.A)).toBeUndefined();
  });

  it('an ExternalName chain inside the domain ends after a bounded number of hops', () => {
    const index = zone();
    index.setService(svc('x', { type: 'ExternalName', externalName: 'y.ns.svc.cluster.local' }));
    index.setService(svc('y', { type: 'ExternalName', externalName: 'x.ns.svc.cluster.local' }));
    const answer = index.lookup('x.ns.svc.cluster.local', QTYPE.A)!;
    expect(answer.rcode).toBe(RCODE.SERVFAIL);
    expect(answer.answers.length).toBeLessThanOrEqual(10);
  });
});
