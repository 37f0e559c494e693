import type { Service } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { clusterIPUpdateErrors, dropTypeDependentFields, heldPorts, initIPFamilies, normalizeClusterIPs, patchAllocatedValues } from './service-spec.js';

const svc = (spec: Service['spec']): Service => ({ metadata: { name: 's', namespace: 'ns' }, spec });

describe('service fields around allocation', () => {
  it('fills clusterIPs from clusterIP on create, and follows a changed clusterIP on update', () => {
    const created = { clusterIP: '10.96.0.5' };
    normalizeClusterIPs(created, undefined);
    expect(created).toEqual({ clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'] });
    const updated = { clusterIP: '10.96.0.6', clusterIPs: ['10.96.0.5'] };
    normalizeClusterIPs(updated, { clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'] });
    expect(updated.clusterIPs).toEqual(['10.96.0.6']);
  });

  it('drops node ports that were not changed when a Service becomes ClusterIP', () => {
    const old = svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] });
    const next = svc({ type: 'ClusterIP', ports: [{ port: 80, nodePort: 30080 }] });
    dropTypeDependentFields(next, old);
    expect(next.spec?.ports).toEqual([{ port: 80 }]);
  });

  it('keeps allocated values an update leaves out, by port name', () => {
    const old = svc({ type: 'NodePort', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ports: [{ name: 'a', port: 80, nodePort: 30080 }] });
    const next = svc({ type: 'NodePort', ports: [{ name: 'a', port: 8080 }] });
    patchAllocatedValues(next, old);
    expect(next.spec).toMatchObject({ clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ports: [{ name: 'a', port: 8080, nodePort: 30080 }] });
  });

  it('defaults and checks IP families against the configured ones', () => {
    const single = svc({ ipFamilyPolicy: 'PreferDualStack' });
    expect(initIPFamilies(single, undefined, ['IPv4'])).toEqual([]);
    expect(single.spec?.ipFamilies).toEqual(['IPv4']);
    const dual = svc({ ipFamilyPolicy: 'PreferDualStack' });
    expect(initIPFamilies(dual, undefined, ['IPv4', 'IPv6'])).toEqual([]);
    expect(dual.spec?.ipFamilies).toEqual(['IPv4', 'IPv6']);
    expect(initIPFamilies(svc({ ipFamilyPolicy: 'RequireDualStack' }), undefined, ['IPv4']).map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
    ]);
    expect(initIPFamilies(svc({ ipFamilies: ['IPv6'] }), undefined, ['IPv4']).map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
    ]);
  });

  it('refuses a changed primary cluster IP as upstream words it', () => {
    const old = svc({ clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'] });
    expect(clusterIPUpdateErrors(svc({ clusterIPs: ['10.96.0.6'] }), old).map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.clusterIPs[0]: Invalid value: ["10.96.0.6"]: may not change once set',
    ]);
    expect(clusterIPUpdateErrors(svc({ type: 'ExternalName' }), old)).toEqual([]);
  });

  it('counts the health check port of a Local LoadBalancer among the held ports', () => {
    const lb = svc({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30100, ports: [{ port: 80, nodePort: 30080 }] });
    expect(heldPorts(lb).sort()).toEqual([30080, 30100]);
    expect(heldPorts(svc({ type: 'ClusterIP', ports: [{ port: 80, nodePort: 30080 }] }))).toEqual([]);
  });
});
