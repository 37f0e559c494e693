import { RESOURCES, type Node, type PersistentVolume, type PersistentVolumeClaim, type Pod, type StorageClass } from '@skiff/api';
import type { ApiClient, Informer, InformerFactory } from '@skiff/kernel';
import { AssumeCache } from './assume-cache.js';
import {
  claimClass,
  claimKey,
  findMatchingVolume,
  isClaimFullyBound,
  isClaimOfPod,
  isDelayBinding,
  podClaimRefs,
  requestedBytes,
  volumeBoundToClaim,
  volumeClass,
} from './claims.js';
import { hostnamesOfVolume, topologyAllows, volumeFitsNode } from './node-affinity.js';
import { ANNOTATION, NOT_SUPPORTED_PROVISIONER, REASON } from './names.js';

/** A pod's claims, sorted as the filter needs them (upstream's PodVolumeClaims). */
export interface PodVolumeClaims {
  bound: PersistentVolumeClaim[];
  /** Unbound claims of a WaitForFirstConsumer class: the scheduler picks their volume or has one provisioned. */
  unboundDelayBinding: PersistentVolumeClaim[];
  /** Unbound claims that should have been bound already (Immediate class, or naming their volume). */
  unboundImmediate: PersistentVolumeClaim[];
  /** The volumes of each delayed-binding claim's class, as the cycle began. */
  volumesByClass: Map<string, PersistentVolume[]>;
}

export interface StaticBinding {
  volume: PersistentVolume;
  claim: PersistentVolumeClaim;
}

/** What binding the pod's volumes takes on one node: volumes to pre-bind to claims, claims to provision there. */
export interface PodVolumes {
  staticBindings: StaticBinding[];
  dynamicProvisions: PersistentVolumeClaim[];
}

/** Why a pod's claims make it wait before any node is looked at. */
export class ClaimProblem extends Error {}

function rv(object: { metadata: { resourceVersion?: string } }): bigint {
  const value = object.metadata.resourceVersion;
  return value && /^\d+$/.test(value) ? BigInt(value) : 0n;
}

const DEFAULT_POLL_MS = 1000;

/**
 * The scheduler's side of volume binding (upstream's SchedulerVolumeBinder): which claims a pod still needs
 * bound, which volumes or provisioning can serve them on a node, the decisions assumed in memory at reserve,
 * and, at preBind, the API writes that hand them to the PV controller and the wait until it has bound them.
 */
export class VolumeBinder {
  readonly claims: AssumeCache<PersistentVolumeClaim>;
  readonly volumes: AssumeCache<PersistentVolume>;
  private readonly classes: Informer<StorageClass>;
  private readonly nodes: Informer<Node>;
  private readonly pods: Informer<Pod>;
  /** Woken on every claim or volume change: preBinds waiting for the PV controller look again. */
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly client: ApiClient,
    informers: InformerFactory,
    private readonly bindTimeoutMs: number,
    private readonly signal?: AbortSignal,
    private readonly pollMs = DEFAULT_POLL_MS,
  ) {
    const claimInformer = informers.informer<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims);
    const volumeInformer = informers.informer<PersistentVolume>(RESOURCES.persistentvolumes);
    this.claims = new AssumeCache(claimInformer, claimKey);
    this.volumes = new AssumeCache(volumeInformer, (volume) => volume.metadata.name!);
    this.classes = informers.informer<StorageClass>(RESOURCES.storageclasses);
    this.nodes = informers.informer<Node>(RESOURCES.nodes);
    this.pods = informers.informer<Pod>(RESOURCES.pods);
    const wake = () => {
      for (const waiter of [...this.waiters]) waiter();
    };
    for (const informer of [claimInformer, volumeInformer] as Informer[]) informer.addHandlers({ add: wake, update: wake, delete: wake });
  }

  /**
   * The pod's claims, checked as preFilter checks them: each must exist, not be Lost, not be going away, and
   * (for an ephemeral volume) belong to the pod. Answers undefined for a pod without claims.
   */
  podClaims(pod: Pod): PodVolumeClaims | undefined {
    const refs = podClaimRefs(pod);
    if (refs.length === 0) return undefined;
    const result: PodVolumeClaims = { bound: [], unboundDelayBinding: [], unboundImmediate: [], volumesByClass: new Map() };
    const namespace = pod.metadata.namespace;
    for (const { claimName, ephemeral } of refs) {
      const claim = this.claims.get(`${namespace}/${claimName}`);
      if (!claim) {
        throw new ClaimProblem(
          ephemeral
            ? `waiting for ephemeral volume controller to create the persistentvolumeclaim "${claimName}"`
            : `persistentvolumeclaim "${claimName}" not found`,
        );
      }
      if (claim.status?.phase === 'Lost') {
        throw new ClaimProblem(`persistentvolumeclaim "${claimName}" bound to non-existent persistentvolume "${claim.spec?.volumeName ?? ''}"`);
      }
      if (claim.metadata.deletionTimestamp) throw new ClaimProblem(`persistentvolumeclaim "${claimName}" is being deleted`);
      if (ephemeral && !isClaimOfPod(claim, pod)) {
        throw new ClaimProblem(`PVC ${namespace}/${claimName} was not created for pod ${namespace}/${pod.metadata.name} (pod is not owner)`);
      }
      if (isClaimFullyBound(claim)) result.bound.push(claim);
      else if (isDelayBinding(claim, (name) => this.classes.get(name)) && !claim.spec?.volumeName) result.unboundDelayBinding.push(claim);
      else result.unboundImmediate.push(claim);
    }
    for (const claim of result.unboundDelayBinding) {
      const className = claimClass(claim);
      if (!result.volumesByClass.has(className))
        result.volumesByClass.set(
          className,
          this.volumes.list().filter((volume) => volumeClass(volume) === className),
        );
    }
    return result;
  }

  /**
   * The nodes the pod's bound local volumes pin it to (their `kubernetes.io/hostname In` affinity), or
   * undefined when they leave every node possible or a volume cannot be found.
   */
  eligibleNodes(bound: readonly PersistentVolumeClaim[]): Set<string> | undefined {
    let eligible: Set<string> | undefined;
    for (const claim of bound) {
      const volume = this.volumes.get(claim.spec!.volumeName!);
      if (!volume) return undefined;
      const names = hostnamesOfVolume(volume);
      if (names.length === 0) continue;
      eligible = eligible ? new Set(names.filter((name) => eligible!.has(name))) : new Set(names);
    }
    return eligible;
  }

  /**
   * Whether the pod's claims can all be served on `node`, and how: bound claims' volumes must be usable from
   * it; each delayed-binding claim needs an available volume usable from it or a class that can provision
   * there. Answers the reasons it cannot, or the plan. Throws for a claim that can never be provisioned as
   * set up (no class, an unknown class).
   */
  findPodVolumes(claims: PodVolumeClaims, node: Node): { volumes: PodVolumes; reasons: string[] } {
    const labels = node.metadata.labels;
    const volumes: PodVolumes = { staticBindings: [], dynamicProvisions: [] };
    const reasons: string[] = [];
    let boundFound = true;
    let boundFits = true;
    for (const claim of claims.bound) {
      const volume = this.volumes.get(claim.spec!.volumeName!);
      if (!volume) {
        boundFound = false;
        break;
      }
      if (!volumeFitsNode(volume, labels)) {
        boundFits = false;
        break;
      }
    }
    const finish = (unboundFits: boolean) => {
      if (!boundFits) reasons.push(REASON.NODE_CONFLICT);
      if (!unboundFits) reasons.push(REASON.BIND_CONFLICT);
      if (!boundFound) reasons.push(REASON.PV_NOT_EXIST);
      return { volumes, reasons };
    };
    if (claims.unboundDelayBinding.length === 0) return finish(true);

    const toMatch: PersistentVolumeClaim[] = [];
    const toProvision: PersistentVolumeClaim[] = [];
    for (const claim of claims.unboundDelayBinding) {
      const selected = claim.metadata.annotations?.[ANNOTATION.SELECTED_NODE];
      if (selected === undefined) toMatch.push(claim);
      else if (selected === node.metadata.name) toProvision.push(claim);
      // Provisioning for another node is under way: this one cannot have the claim.
      else return finish(false);
    }

    let unboundFits = true;
    const chosen = new Set<string>();
    // Smallest requests first, so each takes the smallest volume that fits it.
    const bySize = [...toMatch].sort((a, b) => requestedBytes(a) - requestedBytes(b));
    for (const claim of bySize) {
      const volume = findMatchingVolume(claim, claims.volumesByClass.get(claimClass(claim)) ?? [], labels, chosen);
      if (!volume) {
        unboundFits = false;
        toProvision.push(claim);
        continue;
      }
      chosen.add(volume.metadata.name!);
      volumes.staticBindings.push({ volume, claim });
    }
    if (toProvision.length > 0) {
      unboundFits = this.canProvision(toProvision, node);
      if (unboundFits) volumes.dynamicProvisions.push(...toProvision);
    }
    return finish(unboundFits);
  }

  /** Every claim's class names a provisioner, and its allowedTopologies admit the node. */
  private canProvision(claims: readonly PersistentVolumeClaim[], node: Node): boolean {
    for (const claim of claims) {
      const className = claimClass(claim);
      if (!className) throw new Error(`no class for claim "${claimKey(claim)}"`);
      const storageClass = this.classes.get(className);
      if (!storageClass) throw new Error(`failed to find storage class "${className}"`);
      if (!storageClass.provisioner || storageClass.provisioner === NOT_SUPPORTED_PROVISIONER) return false;
      if (!topologyAllows(storageClass.allowedTopologies, node.metadata.labels)) return false;
    }
    return true;
  }

  /** Whether every claim of the pod is fully bound, as the caches (assumptions included) say. */
  private podClaimsBound(pod: Pod): boolean {
    return podClaimRefs(pod).every(({ claimName }) => {
      const claim = this.claims.get(`${pod.metadata.namespace}/${claimName}`);
      return !!claim && isClaimFullyBound(claim);
    });
  }

  /**
   * Reserve: lays the node's plan over the caches — volumes pre-bound to their claims, claims carrying the
   * selected node — so the next pods do not pick the same volumes. Answers whether all is bound already
   * (nothing for preBind to do). On failure, what it assumed is taken back.
   */
  assume(pod: Pod, nodeName: string, volumes: PodVolumes): boolean {
    if (this.podClaimsBound(pod)) return true;
    const bindings: StaticBinding[] = [];
    const provisions: PersistentVolumeClaim[] = [];
    try {
      for (const binding of volumes.staticBindings) {
        const { volume, changed } = volumeBoundToClaim(binding.volume, binding.claim);
        if (changed) this.volumes.assume(volume);
        bindings.push({ volume, claim: binding.claim });
      }
      for (const claim of volumes.dynamicProvisions) {
        const annotated: PersistentVolumeClaim = {
          ...{},
          ...claim,
          metadata: { ...{}, ...claim.metadata, annotations: { ...{}, ...claim.metadata.annotations, [ANNOTATION.SELECTED_NODE]: nodeName } },
        };
        this.claims.assume(annotated);
        provisions.push(annotated);
      }
    } catch (err) {
      this.revert({ staticBindings: bindings, dynamicProvisions: provisions });
      throw err;
    }
    volumes.staticBindings = bindings;
    volumes.dynamicProvisions = provisions;
    return false;
  }

  /** Unreserve: forgets what `assume` laid over the caches. */
  revert(volumes: PodVolumes): void {
    for (const { volume } of volumes.staticBindings) this.volumes.restore(volume.metadata.name!);
    for (const claim of volumes.dynamicProvisions) this.claims.restore(claimKey(claim));
  }

  /**
   * PreBind: writes the plan (each volume's claimRef; each claim's selected-node annotation, which starts
   * provisioning), then waits until the PV controller has bound every claim, at most the bind timeout. Throws
   * when a write fails, when binding or provisioning is undone (the pod is then scheduled again), or on timeout.
   */
  async bind(pod: Pod, nodeName: string, volumes: PodVolumes): Promise<void> {
    await this.writePlan(volumes);
    const deadline = Date.now() + this.bindTimeoutMs;
    try {
      while (!this.bindingsDone(pod, nodeName, volumes)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('timed out waiting for the condition');
        await this.nextChange(Math.min(left, this.pollMs));
      }
    } catch (err) {
      throw new Error(`binding volumes: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  private async writePlan(volumes: PodVolumes): Promise<void> {
    const { staticBindings, dynamicProvisions } = volumes;
    let bindingsDone = 0;
    let provisionsDone = 0;
    try {
      for (const binding of staticBindings) {
        binding.volume = await this.client.update(RESOURCES.persistentvolumes, binding.volume);
        bindingsDone++;
      }
      for (let i = 0; i < dynamicProvisions.length; i++) {
        dynamicProvisions[i] = await this.client.update(RESOURCES.persistentvolumeclaims, dynamicProvisions[i]!);
        provisionsDone++;
      }
    } catch (err) {
      // What reached the API server comes back through the watch; the rest was never more than assumed.
      this.revert({ staticBindings: staticBindings.slice(bindingsDone), dynamicProvisions: dynamicProvisions.slice(provisionsDone) });
      throw err;
    }
  }

  /**
   * Whether the PV controller has finished, judged on the API server's objects (the informers, never an
   * assumption). Throws when it never will: the pod or node is gone, a volume's claimRef was dropped, the
   * provisioner gave the claim back (its selected node removed), or a volume turned out not to fit the node.
   */
  private bindingsDone(pod: Pod, nodeName: string, volumes: PodVolumes): boolean {
    const node = this.nodes.get(nodeName);
    if (!node) throw new Error(`failed to get node "${nodeName}": node "${nodeName}" not found`);
    if (!this.pods.get(`${pod.metadata.namespace}/${pod.metadata.name}`)) throw new Error(`pod does not exist any more: pod "${pod.metadata.name}" not found`);
    const mustFit = (volume: PersistentVolume) => {
      if (!volumeFitsNode(volume, node.metadata.labels)) {
        throw new Error(`pv "${volume.metadata.name}" node affinity doesn't match node "${nodeName}": no matching NodeSelectorTerms`);
      }
    };
    for (const binding of volumes.staticBindings) {
      const name = binding.volume.metadata.name!;
      const volume = this.volumes.getApi(name);
      if (!volume) throw new Error(`failed to check binding: persistentvolume "${name}" not found`);
      const claim = this.claims.getApi(claimKey(binding.claim));
      if (!claim) throw new Error(`failed to check binding: persistentvolumeclaim "${claimKey(binding.claim)}" not found`);
      // Our own write has not come back through the watch yet.
      if (rv(volume) < rv(binding.volume)) return false;
      mustFit(volume);
      if (!volume.spec.claimRef?.uid) throw new Error(`ClaimRef got reset for pv "${name}"`);
      if (!isClaimFullyBound(claim)) return false;
    }
    for (const provision of volumes.dynamicProvisions) {
      const key = claimKey(provision);
      const claim = this.claims.getApi(key);
      if (!claim) throw new Error(`failed to check provisioning pvc: persistentvolumeclaim "${key}" not found`);
      if (rv(claim) < rv(provision)) return false;
      if (!claim.metadata.annotations) throw new Error(`selectedNode annotation reset for PVC "${claim.metadata.name}"`);
      if (claim.metadata.annotations[ANNOTATION.SELECTED_NODE] !== nodeName) throw new Error(`provisioning failed for PVC "${claim.metadata.name}"`);
      if (claim.spec?.volumeName) {
        const volume = this.volumes.getApi(claim.spec.volumeName);
        if (!volume) return false;
        mustFit(volume);
      }
      if (!isClaimFullyBound(claim)) return false;
    }
    return true;
  }

  /** Resolves on the next claim or volume change, after `ms` at the latest, or rejects when the scheduler stops. */
  private nextChange(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        this.signal?.removeEventListener('abort', stopped);
      };
      const done = () => {
        cleanup();
        resolve();
      };
      const stopped = () => {
        cleanup();
        reject(new Error('the scheduler is stopping'));
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      if (this.signal?.aborted) stopped();
      else this.signal?.addEventListener('abort', stopped, { once: true });
    });
  }
}
