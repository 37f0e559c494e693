import type { KubeObject, PersistentVolumeClaim, Pod } from '@skiff/api';
import { podReferences, type ReferencedKind } from './references.js';

export const PODS_PREFIX = '/registry/pods/';
export const CLAIMS_PREFIX = '/registry/persistentvolumeclaims/';

/** What one bound pod contributes: its node and, per kind, the `<namespace>/<name>` keys it uses. */
interface PodEdges {
  node: string;
  keys: string[];
}

/**
 * Which node may read which object, kept from the stored pods and claims: for every Secret, ConfigMap, claim and
 * ServiceAccount a pod bound to a node names, a count per node of the pods that name it; and each bound claim's
 * PersistentVolume. Every question is a map lookup.
 */
export class NodeGraph {
  private readonly pods = new Map<string, PodEdges>();
  /** `<kind>/<namespace>/<name>` → node → how many of its pods use it. */
  private readonly uses = new Map<string, Map<string, number>>();
  /** PersistentVolume name → `<namespace>/<claim>` of the claims bound to it. */
  private readonly claimsOfVolume = new Map<string, Set<string>>();
  private readonly volumeOfClaim = new Map<string, string>();

  /** Applies a stored pod (or its deletion, `object` undefined) under its store key. */
  applyPod(key: string, object: KubeObject | undefined): void {
    const before = this.pods.get(key);
    if (before) {
      for (const use of before.keys) this.count(use, before.node, -1);
      this.pods.delete(key);
    }
    const pod = object as Pod | undefined;
    const node = pod?.spec?.nodeName;
    if (!pod || !node) return;
    const namespace = pod.metadata.namespace ?? '';
    const keys: string[] = [];
    const refs = podReferences(pod);
    for (const kind of Object.keys(refs) as ReferencedKind[]) for (const name of refs[kind]) keys.push(`${kind}/${namespace}/${name}`);
    for (const use of keys) this.count(use, node, 1);
    this.pods.set(key, { node, keys });
  }

  /** Applies a stored PersistentVolumeClaim (or its deletion) under its store key. */
  applyClaim(key: string, object: KubeObject | undefined): void {
    const claimKey = key.slice(CLAIMS_PREFIX.length);
    const previous = this.volumeOfClaim.get(claimKey);
    if (previous) {
      const claims = this.claimsOfVolume.get(previous);
      claims?.delete(claimKey);
      if (claims?.size === 0) this.claimsOfVolume.delete(previous);
      this.volumeOfClaim.delete(claimKey);
    }
    const volume = (object as PersistentVolumeClaim | undefined)?.spec?.volumeName;
    if (!volume) return;
    this.volumeOfClaim.set(claimKey, volume);
    let claims = this.claimsOfVolume.get(volume);
    if (!claims) this.claimsOfVolume.set(volume, (claims = new Set()));
    claims.add(claimKey);
  }

  /** Whether a pod bound to `node` uses the object (`namespace` empty for a PersistentVolume). */
  related(node: string, kind: ReferencedKind | 'persistentvolumes', namespace: string, name: string): boolean {
    if (kind === 'persistentvolumes') {
      for (const claim of this.claimsOfVolume.get(name) ?? []) if (this.uses.get(`persistentvolumeclaims/${claim}`)?.has(node)) return true;
      return false;
    }
    return this.uses.get(`${kind}/${namespace}/${name}`)?.has(node) ?? false;
  }

  /** Store keys of the pods known, for a relist to drop the ones gone. */
  podKeys(): string[] {
    return [...this.pods.keys()];
  }

  claimKeys(): string[] {
    return [...this.volumeOfClaim.keys()].map((claim) => CLAIMS_PREFIX + claim);
  }

  private count(use: string, node: string, delta: number): void {
    let nodes = this.uses.get(use);
    if (!nodes) {
      if (delta < 0) return;
      this.uses.set(use, (nodes = new Map()));
    }
    const next = (nodes.get(node) ?? 0) + delta;
    if (next > 0) nodes.set(node, next);
    else {
      nodes.delete(node);
      if (nodes.size === 0) this.uses.delete(use);
    }
  }
}
