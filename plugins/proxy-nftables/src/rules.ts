import { usableEndpoints, type EndpointInfo, type Protocol, type ServicePortInfo } from './model.js';
import { CHAINS, MAPS, SETS } from './names.js';

// The nftables ruleset of the proxy, as `nft -f` scripts. The table is IPv4 only (`ip` family).
//
// Lookup is O(1) whatever the number of Services: `services` looks the destination up in the verdict maps
// (address . protocol . port → a Service's chain) and the Service's chain spreads with `numgen random`. Services
// with ClientIP affinity get a chain and a timeout set per endpoint (`update @set { ip saddr }`); the others
// DNAT straight from a numgen-keyed map, which keeps the number of chains, and with it nft's cache, small.

export interface RulesConfig {
  table: string;
  /** The cluster's pod range: traffic to ClusterIPs from outside it is masqueraded. */
  clusterCIDR: string;
  /** The packet mark bit that asks the postrouting chain to masquerade (0x4000 for bit 14). */
  masqueradeMark: number;
}

/** One entry of a shared map or set: `value` is the verdict of a map entry, '' for a set element. */
export interface Element {
  container: string;
  key: string;
  value: string;
}

/** What one Service adds to the table: its own chains and affinity sets, and its entries in the shared maps. */
export interface Fragment {
  /** chain name → its rules, in order */
  chains: Map<string, string[]>;
  /** affinity set name → timeout in seconds */
  sets: Map<string, number>;
  elements: Element[];
}

const hex = (mark: number) => `0x${mark.toString(16)}`;

const serviceChain = (id: string) => `svc-${id}`;
const localChain = (id: string) => `svl-${id}`;
const externalChain = (id: string) => `ext-${id}`;
const endpointChain = (id: string, endpoint: EndpointInfo) => `ep-${id}/${endpoint.ip}/${endpoint.port}`;
const affinitySet = (id: string, endpoint: EndpointInfo) => `aff-${id}/${endpoint.ip}/${endpoint.port}`;

const dnatTo = (protocol: Protocol, endpoint: EndpointInfo) => `meta l4proto ${protocol} dnat to ${endpoint.ip}:${endpoint.port}`;

/** The rules that pick one of `endpoints` (at least one): affinity first, then a random one. */
function pickRules(port: ServicePortInfo, endpoints: EndpointInfo[]): string[] {
  if (port.affinitySeconds !== undefined) {
    const sticky = endpoints.map((e) => `ip saddr @${affinitySet(port.id, e)} goto ${endpointChain(port.id, e)}`);
    const spread = endpoints.map((e, i) => `${i} : goto ${endpointChain(port.id, e)}`).join(', ');
    return [...sticky, `numgen random mod ${endpoints.length} vmap { ${spread} }`];
  }
  if (endpoints.length === 1) return [dnatTo(port.protocol, endpoints[0]!)];
  const spread = endpoints.map((e, i) => `${i} : ${e.ip} . ${e.port}`).join(', ');
  return [`meta l4proto ${port.protocol} dnat ip addr . port to numgen random mod ${endpoints.length} map { ${spread} }`];
}

/** Everything one Service port adds, into `fragment`. */
function addServicePort(fragment: Fragment, port: ServicePortInfo, local: ReadonlySet<string>, config: RulesConfig): void {
  const { id, protocol } = port;
  const element = (container: string, key: string, value = '') => fragment.elements.push({ container, key, value });
  const destinations = [...(port.clusterIP ? [port.clusterIP] : []), ...port.externalIPs];
  const clusterIPKey = `${port.clusterIP} . ${protocol} . ${port.port}`;
  if (port.clusterIP) element(SETS.clusterIPs, port.clusterIP);

  const all = usableEndpoints(port.endpoints);
  if (!all.length) {
    // Nobody answers: refuse at once (connection refused) rather than let the packet wander off.
    for (const ip of destinations) element(MAPS.noEndpointServices, `${ip} . ${protocol} . ${port.port}`, `goto ${CHAINS.reject}`);
    if (port.nodePort) element(MAPS.noEndpointNodePorts, `${protocol} . ${port.nodePort}`, `goto ${CHAINS.reject}`);
    return;
  }
  const localOnes = usableEndpoints(port.endpoints, local);
  const hasExternal = port.nodePort !== undefined || port.externalIPs.length > 0;
  const masqueradeOffCluster = port.clusterIP ? [`ip daddr ${port.clusterIP} ip saddr != ${config.clusterCIDR} jump ${CHAINS.markForMasquerade}`] : [];

  // The chain over every usable endpoint: internal traffic (Cluster policy), external traffic (Cluster policy), and
  // the pod and host traffic that external Local policy short-circuits.
  if (!port.internalLocal || hasExternal) fragment.chains.set(serviceChain(id), [...masqueradeOffCluster, ...pickRules(port, all)]);
  if (localOnes.length && (port.internalLocal || (hasExternal && port.externalLocal)))
    fragment.chains.set(localChain(id), [...(port.internalLocal ? masqueradeOffCluster : []), ...pickRules(port, localOnes)]);
  if (port.affinitySeconds !== undefined) {
    for (const endpoint of new Set([...all, ...localOnes])) {
      fragment.sets.set(affinitySet(id, endpoint), port.affinitySeconds);
      fragment.chains.set(endpointChain(id, endpoint), [`update @${affinitySet(id, endpoint)} { ip saddr }`, dnatTo(protocol, endpoint)]);
    }
  }
  for (const endpoint of new Set([...all, ...localOnes])) element(SETS.hairpin, `${endpoint.ip} . ${endpoint.ip}`);

  if (port.clusterIP) {
    if (!port.internalLocal) element(MAPS.serviceIPs, clusterIPKey, `goto ${serviceChain(id)}`);
    else if (localOnes.length) element(MAPS.serviceIPs, clusterIPKey, `goto ${localChain(id)}`);
    // Local policy without a local endpoint: nothing here may answer, and others must not be asked.
    else element(MAPS.noEndpointServices, clusterIPKey, 'drop');
  }
  if (!hasExternal) return;
  const external = port.externalLocal
    ? [
        // Pods and the host itself may use any endpoint (the source address is ours anyway).
        `ip saddr ${config.clusterCIDR} goto ${serviceChain(id)}`,
        `fib saddr type local jump ${CHAINS.markForMasquerade}`,
        `fib saddr type local goto ${serviceChain(id)}`,
        localOnes.length ? `goto ${localChain(id)}` : 'drop',
      ]
    : [`jump ${CHAINS.markForMasquerade}`, `goto ${serviceChain(id)}`];
  fragment.chains.set(externalChain(id), external);
  for (const ip of port.externalIPs) element(MAPS.serviceIPs, `${ip} . ${protocol} . ${port.port}`, `goto ${externalChain(id)}`);
  if (port.nodePort) element(MAPS.serviceNodePorts, `${protocol} . ${port.nodePort}`, `goto ${externalChain(id)}`);
}

/** The fragment of one Service: the union over its ports. `local` holds the names of the nodes on this host. */
export function serviceFragment(ports: readonly ServicePortInfo[], local: ReadonlySet<string>, config: RulesConfig): Fragment {
  const fragment: Fragment = { chains: new Map(), sets: new Map(), elements: [] };
  for (const port of ports) addServicePort(fragment, port, local, config);
  return fragment;
}

// ---- the shared maps and sets --------------------------------------------------------------------------

export interface ElementChange {
  container: string;
  key: string;
  before?: string;
  after?: string;
}

/**
 * Who claims which entry of the shared maps and sets. Two Services may claim one entry (the same ClusterIP for a
 * moment while one is deleted and the other created, the same endpoint for hairpin): the first claim decides the
 * value, and the entry stays until its last claimant lets go.
 */
export class ElementIndex {
  private readonly claims = new Map<string, Map<string, Element>>();

  /** Replaces what `owner` claims; answers the entries whose effective value changed. */
  replace(owner: string, previous: readonly Element[], next: readonly Element[]): ElementChange[] {
    const touched = new Map<string, { element: Element; before: string | undefined }>();
    const touch = (element: Element) => {
      const id = `${element.container} ${element.key}`;
      if (!touched.has(id)) touched.set(id, { element, before: this.effective(id) });
      return id;
    };
    for (const element of previous) this.claims.get(touch(element))?.delete(owner);
    for (const element of next) {
      const id = touch(element);
      let owners = this.claims.get(id);
      if (!owners) this.claims.set(id, (owners = new Map()));
      owners.set(owner, element);
    }
    const changes: ElementChange[] = [];
    for (const [id, { element, before }] of touched) {
      if (!this.claims.get(id)?.size) this.claims.delete(id);
      const after = this.effective(id);
      if (before !== after) changes.push({ container: element.container, key: element.key, before, after });
    }
    return changes;
  }

  /** Every entry with its effective value. */
  *entries(): Iterable<Element> {
    for (const owners of this.claims.values()) {
      const first = owners.values().next().value;
      if (first) yield first;
    }
  }

  private effective(id: string): string | undefined {
    return this.claims.get(id)?.values().next().value?.value;
  }
}

// ---- scripts -----------------------------------------------------------------------------------------

const BASE_CHAINS: [string, string | undefined][] = [
  [CHAINS.natPrerouting, 'type nat hook prerouting priority -100'],
  [CHAINS.natOutput, 'type nat hook output priority -100'],
  [CHAINS.natPostrouting, 'type nat hook postrouting priority 100'],
  [CHAINS.filterInput, 'type filter hook input priority -110'],
  // Forwarded traffic is checked in prerouting, before the routing decision: a node whose route for the service
  // range is `unreachable` (or missing) would otherwise answer with ICMP errors, which the kernel rate-limits.
  [CHAINS.filterPrerouting, 'type filter hook prerouting priority -110'],
  [CHAINS.filterPreroutingPostDnat, 'type filter hook prerouting priority -90'],
  [CHAINS.filterOutput, 'type filter hook output priority -110'],
  // After nat-output's DNAT: what is still addressed to a service address was not served.
  [CHAINS.filterOutputPostDnat, 'type filter hook output priority -90'],
  [CHAINS.services, undefined],
  [CHAINS.endpointsCheck, undefined],
  [CHAINS.nodePortEndpointsCheck, undefined],
  [CHAINS.unservedCheck, undefined],
  [CHAINS.markForMasquerade, undefined],
  [CHAINS.masquerading, undefined],
  [CHAINS.reject, undefined],
];

const BASE_CONTAINERS: [string, 'map' | 'set', string][] = [
  [MAPS.serviceIPs, 'map', 'type ipv4_addr . inet_proto . inet_service : verdict;'],
  [MAPS.serviceNodePorts, 'map', 'type inet_proto . inet_service : verdict;'],
  [MAPS.noEndpointServices, 'map', 'type ipv4_addr . inet_proto . inet_service : verdict;'],
  [MAPS.noEndpointNodePorts, 'map', 'type inet_proto . inet_service : verdict;'],
  [SETS.clusterIPs, 'set', 'type ipv4_addr;'],
  [SETS.nodePortIPs, 'set', 'type ipv4_addr;'],
  [SETS.serviceCIDRs, 'set', 'type ipv4_addr; flags interval; auto-merge;'],
  [SETS.hairpin, 'set', 'type ipv4_addr . ipv4_addr;'],
];

const CONTAINER_KIND = new Map(BASE_CONTAINERS.map(([name, kind]) => [name, kind]));

function baseRules(config: RulesConfig): [string, string][] {
  const mark = hex(config.masqueradeMark);
  const newConnection = 'ct state new';
  return [
    [CHAINS.natPrerouting, `jump ${CHAINS.services}`],
    [CHAINS.natOutput, `jump ${CHAINS.services}`],
    [CHAINS.natPostrouting, `jump ${CHAINS.masquerading}`],
    [CHAINS.filterInput, `${newConnection} jump ${CHAINS.nodePortEndpointsCheck}`],
    [CHAINS.filterInput, `${newConnection} jump ${CHAINS.endpointsCheck}`],
    [CHAINS.filterPrerouting, `${newConnection} jump ${CHAINS.endpointsCheck}`],
    [CHAINS.filterPreroutingPostDnat, `${newConnection} jump ${CHAINS.unservedCheck}`],
    [CHAINS.filterOutput, `${newConnection} jump ${CHAINS.endpointsCheck}`],
    [CHAINS.filterOutputPostDnat, `${newConnection} jump ${CHAINS.unservedCheck}`],
    [CHAINS.services, `ip daddr . meta l4proto . th dport vmap @${MAPS.serviceIPs}`],
    [CHAINS.services, `ip daddr @${SETS.nodePortIPs} meta l4proto . th dport vmap @${MAPS.serviceNodePorts}`],
    [CHAINS.endpointsCheck, `ip daddr . meta l4proto . th dport vmap @${MAPS.noEndpointServices}`],
    [CHAINS.nodePortEndpointsCheck, `ip daddr @${SETS.nodePortIPs} meta l4proto . th dport vmap @${MAPS.noEndpointNodePorts}`],
    // Past DNAT a ClusterIP is still the destination only on a port it does not serve; a service-range address
    // no Service holds is refused too, instead of taking the default route.
    [CHAINS.unservedCheck, `ip daddr @${SETS.clusterIPs} goto ${CHAINS.reject}`],
    [CHAINS.unservedCheck, `ip daddr @${SETS.serviceCIDRs} goto ${CHAINS.reject}`],
    [CHAINS.markForMasquerade, `meta mark set meta mark or ${mark}`],
    // A connection DNATed back to the endpoint that opened it must not look to it like it came from itself.
    [CHAINS.masquerading, `ct status dnat ip saddr . ip daddr @${SETS.hairpin} masquerade fully-random`],
    [CHAINS.masquerading, `meta mark & ${mark} == 0 return`],
    [CHAINS.masquerading, `meta mark set meta mark xor ${mark}`],
    [CHAINS.masquerading, 'masquerade fully-random'],
    // TCP gets a reset: the kernel rate-limits ICMP errors per destination (a burst, then one a second), so a
    // client refused often would see its SYNs dropped and retried after 1, 2, 4 s instead of a refusal at once.
    [CHAINS.reject, 'meta l4proto tcp reject with tcp reset'],
    [CHAINS.reject, 'reject'],
  ];
}

/** Builds one `nft -f` transaction for table `ip <table>`. */
class Script {
  readonly lines: string[] = [];
  private readonly table: string;

  constructor(table: string) {
    this.table = `ip ${table}`;
  }

  add(line: string): void {
    this.lines.push(line);
  }

  chain(verb: 'add' | 'flush' | 'delete', name: string, spec?: string): void {
    this.add(`${verb} chain ${this.table} ${name}${spec ? ` { ${spec}; policy accept; }` : ''}`);
  }

  rule(chain: string, rule: string): void {
    this.add(`add rule ${this.table} ${chain} ${rule}`);
  }

  affinitySet(verb: 'add' | 'delete', name: string, seconds?: number): void {
    this.add(
      verb === 'add' ? `add set ${this.table} ${name} { type ipv4_addr; flags dynamic,timeout; timeout ${seconds}s; }` : `delete set ${this.table} ${name}`,
    );
  }

  elements(verb: 'add' | 'delete', container: string, items: string[]): void {
    if (items.length) this.add(`${verb} element ${this.table} ${container} { ${items.join(', ')} }`);
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

/** Adds entries grouped by container: one `add element` line per map or set. */
function addElements(script: Script, verb: 'add' | 'delete', elements: Iterable<{ container: string; key: string; value?: string }>): void {
  const byContainer = new Map<string, string[]>();
  for (const { container, key, value } of elements) {
    const item = verb === 'add' && CONTAINER_KIND.get(container) === 'map' ? `${key} : ${value}` : key;
    const items = byContainer.get(container) ?? [];
    items.push(item);
    byContainer.set(container, items);
  }
  for (const [container, items] of byContainer) script.elements(verb, container, items);
}

export interface FullSyncInput {
  /** Start from an empty table (the first sync, and the one after a failure); else flush and refill, keeping affinity state. */
  fresh: boolean;
  nodeIPs: readonly string[];
  serviceCIDRs: readonly string[];
  fragments: Iterable<Fragment>;
  elements: Iterable<Element>;
  /** Chains and affinity sets the table holds now (what the last successful sync wrote), for a flushing sync. */
  current?: { chains: Iterable<string>; sets: ReadonlyMap<string, number> };
}

/** The whole table in one transaction. */
export function fullSyncScript(config: RulesConfig, input: FullSyncInput): string {
  const script = new Script(config.table);
  const table = `ip ${config.table}`;
  script.add(`add table ${table}`);
  if (input.fresh) {
    // Whatever an earlier process left (killed before it could clean up) goes in the same transaction.
    script.add(`delete table ${table}`);
    script.add(`add table ${table}`);
  }
  for (const [name, kind, spec] of BASE_CONTAINERS) {
    script.add(`add ${kind} ${table} ${name} { ${spec} }`);
    if (!input.fresh) script.add(`flush ${kind} ${table} ${name}`);
  }
  const wanted = new Map<string, string[]>();
  const sets = new Map<string, number>();
  for (const [name, spec] of BASE_CHAINS) {
    script.chain('add', name, spec);
    if (!input.fresh) script.chain('flush', name);
  }
  for (const fragment of input.fragments) {
    for (const [name, rules] of fragment.chains) wanted.set(name, rules);
    for (const [name, seconds] of fragment.sets) sets.set(name, seconds);
  }
  const stale = new Set(input.fresh ? [] : input.current?.chains);
  for (const name of wanted.keys()) {
    script.chain('add', name);
    if (!input.fresh) script.chain('flush', name);
    stale.delete(name);
  }
  for (const name of stale) script.chain('flush', name);
  for (const [name, seconds] of input.fresh ? [] : (input.current?.sets ?? [])) {
    if (sets.get(name) !== seconds) script.affinitySet('delete', name);
  }
  for (const [name, seconds] of sets) script.affinitySet('add', name, seconds);
  for (const [chain, rule] of baseRules(config)) script.rule(chain, rule);
  for (const [chain, rules] of wanted) for (const rule of rules) script.rule(chain, rule);
  script.elements('add', SETS.nodePortIPs, [...new Set(input.nodeIPs)]);
  script.elements('add', SETS.serviceCIDRs, [...input.serviceCIDRs]);
  addElements(script, 'add', input.elements);
  for (const name of stale) script.chain('delete', name);
  return script.text();
}

export interface FragmentChange {
  previous?: Fragment;
  next?: Fragment;
}

/**
 * Only what changed, in one transaction: new chains are added, changed ones flushed and refilled, gone ones
 * flushed and deleted once nothing points at them; map entries are deleted and added as the index says.
 */
export function incrementalScript(
  config: RulesConfig,
  changes: readonly FragmentChange[],
  elements: readonly ElementChange[],
  serviceCIDRs?: readonly string[],
): string {
  const script = new Script(config.table);
  const added: string[] = [];
  const refilled: [string, string[]][] = [];
  const gone: string[] = [];
  const setsGone: string[] = [];
  const setsAdded: [string, number][] = [];
  for (const { previous, next } of changes) {
    const before: Fragment = previous ?? { chains: new Map(), sets: new Map(), elements: [] };
    const after: Fragment = next ?? { chains: new Map(), sets: new Map(), elements: [] };
    // A set made anew must not keep rules bound to the old one: its Service's chains are all refilled then.
    let respecified = false;
    for (const [name, seconds] of before.sets) {
      if (after.sets.get(name) === seconds) continue;
      setsGone.push(name);
      if (after.sets.has(name)) respecified = true;
    }
    for (const [name, seconds] of after.sets) if (before.sets.get(name) !== seconds) setsAdded.push([name, seconds]);
    for (const [name, rules] of after.chains) {
      const old = before.chains.get(name);
      if (!old) {
        added.push(name);
        refilled.push([name, rules]);
      } else if (respecified || old.length !== rules.length || old.some((rule, i) => rule !== rules[i])) {
        script.chain('flush', name);
        refilled.push([name, rules]);
      }
    }
    for (const name of before.chains.keys()) if (!after.chains.has(name)) gone.push(name);
  }
  for (const name of gone) script.chain('flush', name);
  script.lines.unshift(...added.map((name) => `add chain ip ${config.table} ${name}`));
  for (const name of setsGone) script.affinitySet('delete', name);
  for (const [name, seconds] of setsAdded) script.affinitySet('add', name, seconds);
  addElements(
    script,
    'delete',
    elements.filter((change) => change.before !== undefined),
  );
  for (const [chain, rules] of refilled) for (const rule of rules) script.rule(chain, rule);
  addElements(
    script,
    'add',
    elements.filter((change) => change.after !== undefined).map((change) => ({ ...{}, ...change, value: change.after })),
  );
  if (serviceCIDRs) {
    script.add(`flush set ip ${config.table} ${SETS.serviceCIDRs}`);
    script.elements('add', SETS.serviceCIDRs, [...serviceCIDRs]);
  }
  for (const name of gone) script.chain('delete', name);
  return script.lines.length ? script.text() : '';
}
