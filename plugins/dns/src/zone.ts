import { isIPv4, isIPv6 } from 'node:net';
import type { Answer } from 'dns-packet';
import type { EndpointSlice, Service } from '@skiff/api';
import { addressFromDashed, dashedAddress, reverseName } from './addresses.js';
import { LABEL_SERVICE_NAME, SCHEMA_VERSION } from './names.js';
import { QTYPE, RCODE } from './wire.js';

interface SrvTarget {
  port: number;
  target: string;
}

/** The records one Service gives one name. */
interface RecordSet {
  a: string[];
  aaaa: string[];
  srv: SrvTarget[];
  ptr: string[];
  cname?: string;
}

/** An answer of the zone, before encoding. `external`: a CNAME target outside the zone, for the forwarder to chase. */
export interface ZoneAnswer {
  rcode: number;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
  external?: { name: string; qtype: number };
}

export interface ZoneSettings {
  domain: string;
  ttl: number;
  /** The address of the zone's name server record (the kube-dns Service's ClusterIP). */
  serviceIP: string;
}

const emptySet = (): RecordSet => ({ a: [], aaaa: [], srv: [], ptr: [] });
const MAX_CNAME_HOPS = 8;
const SOA_TIMERS = Object.freeze({ refresh: 7200, retry: 1800, expire: 86400 });

/**
 * The records of the Kubernetes DNS specification (v1.1.0) for one cluster domain, kept per Service from
 * Services and EndpointSlices as informer events arrive: a change rebuilds the names of that one Service.
 * Reverse names live here too; anything else outside the domain is not this zone's (lookup answers undefined).
 */
export class ZoneIndex {
  private readonly services = new Map<string, Service>();
  private readonly slicesByService = new Map<string, Map<string, EndpointSlice>>();
  private readonly sliceOwner = new Map<string, string>();
  /** What each Service contributes: name → records. */
  private readonly contributions = new Map<string, Map<string, RecordSet>>();
  /** name → (service key → records). A reverse name can have several owners. */
  private readonly names = new Map<string, Map<string, RecordSet>>();
  /** Names that exist only because names below them do (empty non-terminals), counted. */
  private readonly ancestors = new Map<string, number>();
  private readonly suffix: string;
  private readonly fixedNames: ReadonlySet<string>;
  private readonly soa: Answer;
  private readonly soaData: { serial: number };
  /** Called after every change, so encoded answers can be dropped. */
  onChange: () => void = () => undefined;

  constructor(private readonly settings: ZoneSettings) {
    const domain = settings.domain;
    this.suffix = `.${domain}`;
    this.fixedNames = new Set([domain, `svc.${domain}`, `pod.${domain}`, `dns.${domain}`]);
    this.soaData = this.makeSoaData();
    this.soa = { name: domain, type: 'SOA', ttl: settings.ttl, class: 'IN', data: this.soaData as never };
  }

  get serviceCount(): number {
    return this.services.size;
  }

  setService(service: Service): void {
    const key = `${service.metadata.namespace}/${service.metadata.name}`;
    this.services.set(key, service);
    this.rebuild(key);
  }

  deleteService(service: Service): void {
    const key = `${service.metadata.namespace}/${service.metadata.name}`;
    this.services.delete(key);
    this.rebuild(key);
  }

  setSlice(slice: EndpointSlice): void {
    const sliceKey = `${slice.metadata.namespace}/${slice.metadata.name}`;
    const serviceName = slice.metadata.labels?.[LABEL_SERVICE_NAME];
    const owner = serviceName ? `${slice.metadata.namespace}/${serviceName}` : undefined;
    const previous = this.sliceOwner.get(sliceKey);
    if (previous !== undefined && previous !== owner) this.removeSlice(sliceKey, previous);
    if (!owner) return;
    this.sliceOwner.set(sliceKey, owner);
    let slices = this.slicesByService.get(owner);
    if (!slices) this.slicesByService.set(owner, (slices = new Map()));
    slices.set(sliceKey, slice);
    this.rebuild(owner);
  }

  deleteSlice(slice: EndpointSlice): void {
    const sliceKey = `${slice.metadata.namespace}/${slice.metadata.name}`;
    const owner = this.sliceOwner.get(sliceKey);
    if (owner !== undefined) this.removeSlice(sliceKey, owner);
  }

  private removeSlice(sliceKey: string, owner: string): void {
    this.sliceOwner.delete(sliceKey);
    const slices = this.slicesByService.get(owner);
    slices?.delete(sliceKey);
    if (slices?.size === 0) this.slicesByService.delete(owner);
    this.rebuild(owner);
  }

  /** Replaces the names of one Service with what its object and slices say now. */
  private rebuild(key: string): void {
    const old = this.contributions.get(key);
    if (old) {
      for (const name of old.keys()) this.removeName(name, key);
      this.contributions.delete(key);
    }
    const service = this.services.get(key);
    if (service) {
      const records = this.recordsOf(service, [...(this.slicesByService.get(key)?.values() ?? [])]);
      for (const [name, set] of records) this.addName(name, key, set);
      this.contributions.set(key, records);
    }
    if (old || service) this.changed();
  }

  private changed(): void {
    // RFC 1982 serial arithmetic: a newer zone has a larger serial.
    this.soaData.serial = (this.soaData.serial + 1) >>> 0;
    this.onChange();
  }

  private addName(name: string, owner: string, set: RecordSet): void {
    let owners = this.names.get(name);
    if (!owners) this.names.set(name, (owners = new Map()));
    owners.set(owner, set);
    for (const ancestor of this.ancestorsOf(name)) this.ancestors.set(ancestor, (this.ancestors.get(ancestor) ?? 0) + 1);
  }

  private removeName(name: string, owner: string): void {
    const owners = this.names.get(name);
    owners?.delete(owner);
    if (owners?.size === 0) this.names.delete(name);
    for (const ancestor of this.ancestorsOf(name)) {
      const count = (this.ancestors.get(ancestor) ?? 0) - 1;
      if (count > 0) this.ancestors.set(ancestor, count);
      else this.ancestors.delete(ancestor);
    }
  }

  /** The names between `name` and the domain (reverse names have none: the reverse zones are not this server's). */
  private ancestorsOf(name: string): string[] {
    if (!name.endsWith(this.suffix)) return [];
    const result: string[] = [];
    for (let dot = name.indexOf('.'); dot >= 0 && dot < name.length - this.suffix.length; dot = name.indexOf('.', dot + 1)) result.push(name.slice(dot + 1));
    return result;
  }

  private recordsOf(service: Service, slices: EndpointSlice[]): Map<string, RecordSet> {
    const spec = service.spec ?? {};
    const fqdn = `${service.metadata.name}.${service.metadata.namespace}.svc.${this.settings.domain}`;
    const records = new Map<string, RecordSet>();
    const at = (name: string): RecordSet => {
      let set = records.get(name);
      if (!set) records.set(name, (set = emptySet()));
      return set;
    };
    const self = at(fqdn);
    if (spec.type === 'ExternalName') {
      const target = canonicalName(spec.externalName ?? '');
      if (isHostName(target)) self.cname = target;
      return records;
    }
    if (spec.clusterIP !== 'None') {
      const ips = spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [];
      for (const ip of ips) {
        if (isIPv4(ip)) self.a.push(ip);
        else if (isIPv6(ip)) self.aaaa.push(ip);
        else continue;
        at(reverseName(ip)!).ptr.push(fqdn);
      }
      for (const port of spec.ports ?? []) {
        if (port.name) at(srvName(port.name, port.protocol, fqdn)).srv.push({ port: port.port, target: fqdn });
      }
      return records;
    }
    const publishNotReady = spec.publishNotReadyAddresses === true;
    for (const slice of slices) {
      const family = slice.addressType === 'IPv4' ? 4 : slice.addressType === 'IPv6' ? 6 : 0;
      if (!family) continue;
      for (const endpoint of slice.endpoints ?? []) {
        // A missing ready condition means ready (discovery.k8s.io/v1).
        if (!publishNotReady && endpoint.conditions?.ready === false) continue;
        const addresses = endpoint.addresses.filter((ip) => (family === 4 ? isIPv4(ip) : isIPv6(ip)));
        if (!addresses.length) continue;
        const hostname = endpoint.hostname?.toLowerCase();
        const target = `${hostname ?? dashedAddress(addresses[0]!)}.${fqdn}`;
        const own = at(target);
        for (const ip of addresses) {
          (family === 4 ? self.a : self.aaaa).push(ip);
          (family === 4 ? own.a : own.aaaa).push(ip);
          if (hostname) at(reverseName(ip)!).ptr.push(target);
        }
        for (const port of slice.ports ?? []) {
          if (port.name && port.port !== undefined) at(srvName(port.name, port.protocol, fqdn)).srv.push({ port: port.port, target });
        }
      }
    }
    return records;
  }

  /**
   * The answer for a lowercased name without the final dot, or undefined when the name is not this zone's
   * (outside the domain, or a reverse name the cluster does not know): those are forwarded.
   */
  lookup(name: string, qtype: number): ZoneAnswer | undefined {
    const domain = this.settings.domain;
    const inZone = name === domain || name.endsWith(this.suffix);
    if (!inZone) {
      if (qtype !== QTYPE.PTR && qtype !== QTYPE.ANY) return undefined;
      const owners = this.names.get(name);
      if (!owners) return undefined;
      const answer = this.emptyAnswer();
      this.collect(name, owners, qtype, answer);
      return answer;
    }
    const answer = this.emptyAnswer();
    this.answerInZone(name, qtype, answer, 0);
    if (answer.rcode !== RCODE.NOERROR || answer.answers.length === 0) answer.authorities.push(this.soa);
    return answer;
  }

  private emptyAnswer(): ZoneAnswer {
    return { rcode: RCODE.NOERROR, answers: [], authorities: [], additionals: [] };
  }

  private answerInZone(name: string, qtype: number, answer: ZoneAnswer, hops: number): void {
    const { domain, ttl } = this.settings;
    const owners = this.names.get(name);
    if (owners) {
      for (const set of owners.values()) {
        if (set.cname === undefined) continue;
        answer.answers.push({ name, type: 'CNAME', ttl, class: 'IN', data: set.cname });
        if (qtype === QTYPE.CNAME || qtype === QTYPE.ANY) return;
        const target = set.cname;
        if (target !== domain && !target.endsWith(this.suffix)) answer.external = { name: target, qtype };
        else if (hops < MAX_CNAME_HOPS) this.answerInZone(target, qtype, answer, hops + 1);
        else answer.rcode = RCODE.SERVFAIL;
        return;
      }
      this.collect(name, owners, qtype, answer);
      return;
    }
    if (name === domain) {
      if (qtype === QTYPE.SOA || qtype === QTYPE.ANY) answer.answers.push(this.soa);
      if (qtype === QTYPE.NS || qtype === QTYPE.ANY) {
        answer.answers.push({ name, type: 'NS', ttl, class: 'IN', data: `ns.dns.${domain}` });
        answer.additionals.push({ name: `ns.dns.${domain}`, type: 'A', ttl, class: 'IN', data: this.settings.serviceIP });
      }
      return;
    }
    const relative = name.slice(0, name.length - this.suffix.length);
    if (relative === 'dns-version') {
      if (qtype === QTYPE.TXT || qtype === QTYPE.ANY) answer.answers.push({ name, type: 'TXT', ttl, class: 'IN', data: [SCHEMA_VERSION] });
      return;
    }
    if (relative === 'ns.dns') {
      if (qtype === QTYPE.A || qtype === QTYPE.ANY) answer.answers.push({ name, type: 'A', ttl, class: 'IN', data: this.settings.serviceIP });
      return;
    }
    if (this.fixedNames.has(name) || this.ancestors.has(name)) return;
    if (relative.endsWith('.pod')) {
      this.answerPod(name, relative, qtype, answer);
      return;
    }
    answer.rcode = RCODE.NXDOMAIN;
  }

  /** `<dashed address>.<namespace>.pod.<domain>`: the address the name spells, whatever the namespace. */
  private answerPod(name: string, relative: string, qtype: number, answer: ZoneAnswer): void {
    const labels = relative.split('.');
    if (labels.length === 2) return; // <namespace>.pod.<domain>: exists above every pod name.
    const address = labels.length === 3 ? addressFromDashed(labels[0]!) : undefined;
    if (!address) {
      answer.rcode = RCODE.NXDOMAIN;
      return;
    }
    const ttl = this.settings.ttl;
    if (address.family === 4 && (qtype === QTYPE.A || qtype === QTYPE.ANY)) answer.answers.push({ name, type: 'A', ttl, class: 'IN', data: address.ip });
    if (address.family === 6 && (qtype === QTYPE.AAAA || qtype === QTYPE.ANY)) answer.answers.push({ name, type: 'AAAA', ttl, class: 'IN', data: address.ip });
  }

  private collect(name: string, owners: Map<string, RecordSet>, qtype: number, answer: ZoneAnswer): void {
    const ttl = this.settings.ttl;
    const any = qtype === QTYPE.ANY;
    // One record per value: the same address can sit in two slices while endpoints move between them.
    const seen = new Set<string>();
    const add = (section: Answer[], record: Answer, key: string) => {
      if (seen.has(key)) return;
      seen.add(key);
      section.push(record);
    };
    const targets = new Set<string>();
    for (const set of owners.values()) {
      if (qtype === QTYPE.A || any) for (const ip of set.a) add(answer.answers, { name, type: 'A', ttl, class: 'IN', data: ip }, `A ${ip}`);
      if (qtype === QTYPE.AAAA || any) for (const ip of set.aaaa) add(answer.answers, { name, type: 'AAAA', ttl, class: 'IN', data: ip }, `AAAA ${ip}`);
      if (qtype === QTYPE.PTR || any) for (const target of set.ptr) add(answer.answers, { name, type: 'PTR', ttl, class: 'IN', data: target }, `PTR ${target}`);
      if (qtype === QTYPE.SRV || any) {
        for (const { port, target } of set.srv) {
          add(answer.answers, { name, type: 'SRV', ttl, class: 'IN', data: { priority: 0, weight: 100, port, target } }, `SRV ${port} ${target}`);
          targets.add(target);
        }
      }
    }
    for (const target of targets) {
      for (const targetSet of this.names.get(target)?.values() ?? []) {
        for (const ip of targetSet.a) add(answer.additionals, { name: target, type: 'A', ttl, class: 'IN', data: ip }, `${target} A ${ip}`);
        for (const ip of targetSet.aaaa) add(answer.additionals, { name: target, type: 'AAAA', ttl, class: 'IN', data: ip }, `${target} AAAA ${ip}`);
      }
    }
  }

  private makeSoaData() {
    const { domain, ttl } = this.settings;
    const serial = Math.floor(Date.now() / 1000) >>> 0;
    return { mname: `ns.dns.${domain}`, rname: `hostmaster.${domain}`, serial, ...SOA_TIMERS, minimum: ttl };
  }
}

function srvName(portName: string, protocol: string | undefined, fqdn: string): string {
  return `_${portName.toLowerCase()}._${(protocol ?? 'TCP').toLowerCase()}.${fqdn}`;
}

/** Whether a name can be written on the wire: labels of 1 to 63 bytes, 253 characters at most. */
function isHostName(name: string): boolean {
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => label.length > 0 && label.length <= 63);
}

/** A name as the index keeps it: lowercase, no final dot. */
function canonicalName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
