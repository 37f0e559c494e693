import type { PersistentVolumeClaim, Pod, StatefulSet } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { claimOwnerReferences, claimOwnersUpToDate, claimsFor, podClaimIsStale, wantedOwners } from './claims.js';
import type { RetentionPolicy } from './claims.js';
import { claimLookup, describePlan, member, plan, SET_UID, testSet } from './test-objects.js';

const withClaims = (whenDeleted: RetentionPolicy['whenDeleted'] = 'Retain', whenScaled: RetentionPolicy['whenScaled'] = 'Retain', replicas = 2): StatefulSet =>
  testSet({
    replicas,
    volumeClaimTemplates: [
      { metadata: { name: 'www', labels: { tier: 'data' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    ],
    persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled },
  });

const setRef = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: SET_UID, controller: true, blockOwnerDeletion: true };
const podRef = (pod: Pod) => ({ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name!, uid: pod.metadata.uid!, controller: true, blockOwnerDeletion: true });

function storedClaim(set: StatefulSet, pod: Pod, ownerReferences?: PersistentVolumeClaim['metadata']['ownerReferences']): PersistentVolumeClaim {
  const [claim] = claimsFor(set, pod);
  return { ...claim!, metadata: { ...claim!.metadata, uid: `claim-${pod.metadata.name}`, resourceVersion: '7', ownerReferences } };
}

describe('claims of a member pod', () => {
  it('are named <template>-<set>-<ordinal>, labelled with the template labels and the selector, with the template spec', () => {
    const set = withClaims();
    expect(claimsFor(set, member(set, 1))).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'www-web-1', namespace: 'default', labels: { tier: 'data', app: 'web' } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    ]);
  });
});

describe('retention policy owners', () => {
  it('Retain/Retain: nobody owns the claims', () => {
    const set = withClaims('Retain', 'Retain');
    expect(wantedOwners(set, member(set, 0))).toEqual({ set: false, pod: false });
    expect(wantedOwners(set, member(set, 5))).toEqual({ set: false, pod: false });
  });

  it('whenDeleted Delete: the set owns the claims of every pod (the garbage collector takes them with the set)', () => {
    const set = withClaims('Delete', 'Retain');
    expect(wantedOwners(set, member(set, 0))).toEqual({ set: true, pod: false });
    expect(wantedOwners(set, member(set, 5))).toEqual({ set: true, pod: false });
  });

  it('whenScaled Delete: a scaled-down pod owns its claims (they go with it); pods in range own nothing', () => {
    const set = withClaims('Retain', 'Delete');
    expect(wantedOwners(set, member(set, 0))).toEqual({ set: false, pod: false });
    expect(wantedOwners(set, member(set, 5))).toEqual({ set: false, pod: true });
  });

  it('both Delete: the set while the pod is in range, the pod once scaled down', () => {
    const set = withClaims('Delete', 'Delete');
    expect(wantedOwners(set, member(set, 0))).toEqual({ set: true, pod: false });
    expect(wantedOwners(set, member(set, 5))).toEqual({ set: false, pod: true });
  });

  it('moves a scaled-down claim from the set to the pod, as controller references, keeping foreign owners', () => {
    const set = withClaims('Delete', 'Delete');
    const pod = member(set, 3);
    const foreign = { apiVersion: 'example.com/v1', kind: 'Backup', name: 'nightly', uid: 'backup-uid' };
    const claim = storedClaim(set, pod, [setRef, foreign]);
    expect(claimOwnersUpToDate(claim, set, pod)).toBe(false);
    expect(claimOwnerReferences(claim, set, pod)).toEqual([foreign, podRef(pod)]);
    expect(claimOwnersUpToDate({ ...claim, metadata: { ...claim.metadata, ownerReferences: [foreign, podRef(pod)] } }, set, pod)).toBe(true);
  });

  it('redoes a non-controller reference to the set', () => {
    const set = withClaims('Delete', 'Retain');
    const pod = member(set, 0);
    const claim = storedClaim(set, pod, [{ ...setRef, controller: undefined }]);
    expect(claimOwnersUpToDate(claim, set, pod)).toBe(false);
    expect(claimOwnerReferences(claim, set, pod)).toEqual([setRef]);
  });

  it('leaves a claim controlled by someone else to its controller', () => {
    const set = withClaims('Delete', 'Retain');
    const pod = member(set, 0);
    const claim = storedClaim(set, pod, [{ apiVersion: 'example.com/v1', kind: 'Operator', name: 'db', uid: 'op', controller: true }]);
    expect(claimOwnersUpToDate(claim, set, pod)).toBe(true);
  });

  it('leaves claims referring to an earlier set of the same name alone', () => {
    const set = withClaims('Delete', 'Retain');
    const pod = member(set, 0);
    expect(claimOwnersUpToDate(storedClaim(set, pod, [{ ...setRef, uid: 'old-set' }]), set, pod)).toBe(true);
  });
});

describe('stale claims', () => {
  it('with whenScaled Delete, a claim still owned by the deleted pod of that name blocks the new pod', () => {
    const set = withClaims('Retain', 'Delete', 3);
    const old = member(set, 2);
    const stale = storedClaim(set, old, [podRef(old)]);
    const fresh = { ...old, metadata: { ...old.metadata, uid: undefined } };
    expect(podClaimIsStale(set, fresh, claimLookup([stale]))).toBe(true);
    const p = plan(set, [member(set, 0), member(set, 1)], { claims: [stale] });
    expect(describePlan(p)).toEqual([]);
    expect(p.waitingFor).toBe('the claims of the earlier web-2 to be deleted');
  });

  it('with whenScaled Retain, an old claim is simply reused', () => {
    const set = withClaims('Retain', 'Retain', 3);
    const old = member(set, 2);
    expect(describePlan(plan(set, [member(set, 0), member(set, 1)], { claims: [storedClaim(set, old, [podRef(old)])] }))).toEqual(['create web-2']);
  });
});

describe('claims in the plan', () => {
  it('sets the pod as owner of its claims before a whenScaled Delete scale-down', () => {
    const set = withClaims('Retain', 'Delete', 1);
    const pods = [member(set, 0), member(set, 1)];
    const claims = pods.map((pod) => storedClaim(set, pod));
    expect(describePlan(plan(set, pods, { claims }))).toEqual(['retain-claims web-1', 'scale-down web-1']);
  });

  it('creates the missing claims of a Pending pod', () => {
    const set = withClaims();
    expect(describePlan(plan(set, [member(set, 0, 'pending')]))).toEqual(['create-claims web-0']);
    expect(describePlan(plan(set, [member(set, 0, 'pending')], { claims: [storedClaim(set, member(set, 0))] }))).toEqual([]);
  });

  it('fixes claim owners of a ready pod when the retention policy changed', () => {
    const set = withClaims('Delete', 'Retain', 1);
    const pod = member(set, 0);
    expect(describePlan(plan(set, [pod], { claims: [storedClaim(set, pod)] }))).toEqual(['update web-0']);
  });
});
