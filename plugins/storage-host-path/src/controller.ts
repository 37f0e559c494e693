import {
  isApiError,
  RESOURCES,
  type Node,
  type ObjectReference,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type StorageClass,
} from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import type { HostDirectories } from './host-directories.js';
import {
  claimClass,
  claimKey,
  claimRefOf,
  claimsOfPod,
  findVolumeForClaim,
  isClaimInUse,
  isVolumeBoundToClaim,
  provisionedVolume,
  unsatisfiedBecause,
  unscheduledPodsOf,
  volumeNameFor,
} from './matching.js';
import { ANNOTATION, EVENT_REASON, FINALIZER, HOSTNAME_LABEL } from './names.js';

/** Informer indexes (names prefixed: the informers are shared with other controllers). */
const PODS_BY_CLAIM = 'storage-host-path/claims';
const VOLUMES_BY_CLAIM = 'storage-host-path/claim-ref';

type Item = { kind: 'claim'; key: string } | { kind: 'volume'; key: string };
const claimItem = (key: string) => `claim:${key}`;
const volumeItem = (name: string) => `volume:${name}`;

function parseItem(item: string): Item {
  const colon = item.indexOf(':');
  const key = item.slice(colon + 1);
  return item.slice(0, colon) === 'claim' ? { kind: 'claim', key } : { kind: 'volume', key };
}

export interface BinderOptions {
  /** The StorageClass provisioner this controller provisions for. */
  provisioner: string;
  directories: HostDirectories;
}

/**
 * The PersistentVolume binder, as kube-controller-manager's `persistentvolume-binder` with an in-tree
 * host-path provisioner: Pending claims are bound to a matching volume, or get a new one provisioned as
 * a host directory when their class names our provisioner; volumes whose claim is gone are released and,
 * under the Delete policy, removed with their directory. It also lifts the pvc-protection finalizer once
 * no running pod mounts a claim being deleted, and the pv-protection finalizer once a volume being
 * deleted is no longer bound.
 *
 * Every write is an update carrying the cached resourceVersion, so two workers racing for one volume
 * end with one binding and one conflict, which is retried against the newer cache.
 */
export class PersistentVolumeBinder {
  private readonly queue = new WorkQueue<string>({ name: 'persistentvolume-binder' });
  private readonly claims: Informer<PersistentVolumeClaim>;
  private readonly volumes: Informer<PersistentVolume>;
  private readonly classes: Informer<StorageClass>;
  private readonly pods: Informer<Pod>;
  private readonly nodes: Informer<Node>;
  /** The last event given per claim, so a claim that keeps waiting does not repeat it at every pass. */
  private readonly reported = new Map<string, string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly options: BinderOptions,
  ) {
    this.claims = ctx.informers.informer<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims);
    this.volumes = ctx.informers.informer<PersistentVolume>(RESOURCES.persistentvolumes);
    this.classes = ctx.informers.informer<StorageClass>(RESOURCES.storageclasses);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.nodes = ctx.informers.informer<Node>(RESOURCES.nodes);
    this.pods.addIndex(PODS_BY_CLAIM, (pod) => claimsOfPod(pod).map((name) => `${pod.metadata.namespace}/${name}`));
    this.volumes.addIndex(VOLUMES_BY_CLAIM, (volume) => {
      const ref = volume.spec?.claimRef;
      return ref?.name ? [`${ref.namespace}/${ref.name}`] : [];
    });

    this.claims.addHandlers({
      add: (claim) => this.queue.add(claimItem(claimKey(claim))),
      update: (_old, claim) => this.queue.add(claimItem(claimKey(claim))),
      delete: (claim) => {
        this.reported.delete(claimKey(claim));
        for (const volume of this.volumes.byIndex(VOLUMES_BY_CLAIM, claimKey(claim))) this.queue.add(volumeItem(volume.metadata.name!));
        if (claim.spec?.volumeName) this.queue.add(volumeItem(claim.spec?.volumeName));
      },
    });
    const onVolume = (volume: PersistentVolume) => {
      this.queue.add(volumeItem(volume.metadata.name!));
      const ref = volume.spec?.claimRef;
      if (ref?.name) this.queue.add(claimItem(`${ref.namespace}/${ref.name}`));
      // A volume free to take could serve any claim still waiting.
      else this.enqueuePendingClaims(() => true);
    };
    this.volumes.addHandlers({ add: onVolume, update: (_old, volume) => onVolume(volume), delete: onVolume });
    const onClass = (storageClass: StorageClass) => this.enqueuePendingClaims((claim) => claimClass(claim) === storageClass.metadata.name);
    this.classes.addHandlers({ add: onClass, update: (_old, storageClass) => onClass(storageClass) });
    // Claims wait for their pods to be deleted (protection); a WaitForFirstConsumer claim's event names them.
    const onPod = (pod: Pod) => {
      for (const name of claimsOfPod(pod)) this.queue.add(claimItem(`${pod.metadata.namespace}/${name}`));
    };
    this.pods.addHandlers({ add: onPod, update: (_old, pod) => onPod(pod), delete: onPod });
  }

  /** Waits for the caches, then works the queue until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, {
      informers: [this.claims, this.volumes, this.classes, this.pods, this.nodes],
      queue: this.queue,
      workers,
      sync: (item) => this.sync(item),
    });
  }

  async sync(item: string): Promise<void> {
    const { kind, key } = parseItem(item);
    if (kind === 'claim') await this.syncClaim(key);
    else await this.syncVolume(key);
  }

  // ---- claims ---------------------------------------------------------------------------------------

  async syncClaim(key: string): Promise<void> {
    const claim = this.claims.get(key);
    if (!claim) return;
    if (claim.metadata.deletionTimestamp) return this.releaseClaimProtection(claim);
    if (claim.status?.phase === 'Lost') return;
    if (claim.spec?.volumeName) return this.syncClaimWithVolumeName(claim, claim.spec?.volumeName);

    const className = claimClass(claim);
    const storageClass = className ? this.classes.get(className) : undefined;
    const delayBinding = storageClass?.volumeBindingMode === 'WaitForFirstConsumer';
    const volume = findVolumeForClaim(claim, this.volumes.list(), delayBinding);
    if (volume) return this.bind(claim, volume, true);

    // WaitForFirstConsumer: the scheduler pre-binds a volume it chose, or names the node to provision for.
    if (delayBinding && claim.metadata.annotations?.[ANNOTATION.SELECTED_NODE] === undefined) return this.reportWaitingForConsumer(claim);
    if (!className)
      return this.report(claim, 'Normal', EVENT_REASON.FAILED_BINDING, 'no persistent volumes available for this claim and no storage class is set');
    if (!storageClass) return this.report(claim, 'Warning', EVENT_REASON.PROVISIONING_FAILED, `storageclass.storage.k8s.io "${className}" not found`);
    if (storageClass.provisioner !== this.options.provisioner) {
      return this.report(
        claim,
        'Normal',
        EVENT_REASON.EXTERNAL_PROVISIONING,
        `Waiting for a volume to be created either by the external provisioner '${storageClass.provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
      );
    }
    if (claim.spec?.selector) return this.report(claim, 'Warning', EVENT_REASON.PROVISIONING_FAILED, 'claim Selector is not supported');
    await this.provision(claim, storageClass);
  }

  /** As upstream: WaitForPodScheduled naming the pods that mount the claim and wait for a node, else WaitForFirstConsumer. */
  private reportWaitingForConsumer(claim: PersistentVolumeClaim): void {
    const pods = unscheduledPodsOf(claim, this.pods.byIndex(PODS_BY_CLAIM, claimKey(claim)));
    if (pods.length === 0) return this.report(claim, 'Normal', EVENT_REASON.WAIT_FOR_FIRST_CONSUMER, 'waiting for first consumer to be created before binding');
    const message = pods.length === 1 ? `waiting for pod ${pods[0]} to be scheduled` : `waiting for pods ${pods.join(',')} to be scheduled`;
    this.report(claim, 'Normal', EVENT_REASON.WAIT_FOR_POD_SCHEDULED, message);
  }

  /** A claim naming its volume (bound before, or pre-bound by its author): keep it bound, or bind it if the volume will have it. */
  private async syncClaimWithVolumeName(claim: PersistentVolumeClaim, volumeName: string): Promise<void> {
    const volume = this.volumes.get(volumeName) ?? (await this.liveVolume(volumeName));
    if (!volume) {
      if (claim.status?.phase === 'Bound') {
        this.ctx.recorder.event(claim, 'Warning', 'ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
        await this.ctx.client.updateStatus(RESOURCES.persistentvolumeclaims, { ...{}, ...claim, status: { ...{}, ...claim.status, phase: 'Lost' } });
      }
      return;
    }
    if (volume.spec.claimRef && !isVolumeBoundToClaim(volume, claim)) {
      return this.report(claim, 'Warning', EVENT_REASON.FAILED_BINDING, 'volume already bound to a different claim.');
    }
    if (claim.status?.phase !== 'Bound') {
      const unsatisfied = unsatisfiedBecause(claim, volume);
      if (unsatisfied) return this.report(claim, 'Warning', EVENT_REASON.FAILED_BINDING, `Cannot bind to requested volume "${volumeName}": ${unsatisfied}`);
    }
    await this.bind(claim, volume, claim.metadata.annotations?.[ANNOTATION.BOUND_BY_CONTROLLER] === 'yes');
  }

  private async provision(claim: PersistentVolumeClaim, storageClass: StorageClass): Promise<void> {
    const name = volumeNameFor(claim);
    const selectedNode = claim.metadata.annotations?.[ANNOTATION.SELECTED_NODE];
    let hostname: string | undefined;
    if (selectedNode !== undefined) {
      const node = this.nodes.get(selectedNode);
      if (!node) {
        const message = `Failed to get target node: node "${selectedNode}" not found`;
        this.report(claim, 'Warning', EVENT_REASON.PROVISIONING_FAILED, message);
        throw new Error(message);
      }
      hostname = node.metadata.labels?.[HOSTNAME_LABEL] ?? selectedNode;
    }
    const path = this.options.directories.pathFor(name);
    try {
      await this.options.directories.create(path);
    } catch (err) {
      // The scheduler chose the node for this provisioning: let it choose again.
      if (selectedNode !== undefined) await this.rescheduleProvisioning(claim);
      throw err;
    }
    let volume: PersistentVolume;
    try {
      volume = await this.ctx.client.create(RESOURCES.persistentvolumes, provisionedVolume(claim, storageClass, path, this.options.provisioner, hostname));
      this.ctx.logger.info({ claim: claimKey(claim), volume: name, path }, 'provisioned a volume');
      this.ctx.recorder.event(
        claim,
        'Normal',
        EVENT_REASON.PROVISIONING_SUCCEEDED,
        `Successfully provisioned volume ${name} using ${this.options.provisioner}`,
      );
    } catch (err) {
      // A pass before this one created it and the cache has not caught up: bind what is there.
      if (!isApiError(err, 'AlreadyExists')) throw err;
      volume = await this.ctx.client.get<PersistentVolume>(RESOURCES.persistentvolumes, name);
    }
    await this.bind(claim, volume, true, {
      [ANNOTATION.STORAGE_PROVISIONER]: this.options.provisioner,
      [ANNOTATION.STORAGE_PROVISIONER_BETA]: this.options.provisioner,
    });
  }

  /**
   * Binds both ways, in upstream's order: the volume's claimRef (the volume is the lock), its phase, the
   * claim's volumeName and annotations, then its phase, capacity and access modes. Each step is skipped
   * when already done, so a pass interrupted halfway is finished by the next.
   */
  private async bind(
    claim: PersistentVolumeClaim,
    volume: PersistentVolume,
    byController: boolean,
    claimAnnotations: Record<string, string> = {},
  ): Promise<void> {
    const { client } = this.ctx;
    let pv = volume;
    if (!pv.spec.claimRef?.uid || !isVolumeBoundToClaim(pv, claim)) {
      pv = await client.update(RESOURCES.persistentvolumes, {
        ...{},
        ...pv,
        metadata: { ...{}, ...pv.metadata, annotations: { ...{}, ...pv.metadata.annotations, [ANNOTATION.BOUND_BY_CONTROLLER]: 'yes' } },
        spec: { ...{}, ...pv.spec, claimRef: claimRefOf(claim) },
      });
    }
    if (pv.status?.phase !== 'Bound')
      pv = await client.updateStatus(RESOURCES.persistentvolumes, { ...{}, ...pv, status: { ...{}, ...pv.status, phase: 'Bound' } });

    let pvc = claim;
    const annotations = {
      ...{},
      ...pvc.metadata.annotations,
      ...claimAnnotations,
      [ANNOTATION.BIND_COMPLETED]: 'yes',
      ...(byController ? { [ANNOTATION.BOUND_BY_CONTROLLER]: 'yes' } : {}),
    };
    const annotated = Object.entries(annotations).every(([key, value]) => pvc.metadata.annotations?.[key] === value);
    if (pvc.spec?.volumeName !== pv.metadata.name || !annotated) {
      pvc = await client.update(RESOURCES.persistentvolumeclaims, {
        ...{},
        ...pvc,
        metadata: { ...{}, ...pvc.metadata, annotations },
        spec: { ...{}, ...pvc.spec, volumeName: pv.metadata.name },
      });
    }
    const status = { ...{}, ...pvc.status, phase: 'Bound' as const, capacity: { ...pv.spec.capacity }, accessModes: [...(pv.spec.accessModes ?? [])] };
    if (JSON.stringify(status) !== JSON.stringify(pvc.status)) {
      await client.updateStatus(RESOURCES.persistentvolumeclaims, { ...{}, ...pvc, status });
      this.ctx.logger.info({ claim: claimKey(claim), volume: pv.metadata.name }, 'bound a claim to its volume');
    }
    this.reported.delete(claimKey(claim));
  }

  /** Takes the scheduler's selected node off a claim whose provisioning failed, so the scheduler retries the pod. */
  private async rescheduleProvisioning(claim: PersistentVolumeClaim): Promise<void> {
    const annotations = { ...claim.metadata.annotations };
    delete annotations[ANNOTATION.SELECTED_NODE];
    await this.ignoringGone(() =>
      this.ctx.client.update(RESOURCES.persistentvolumeclaims, { ...{}, ...claim, metadata: { ...{}, ...claim.metadata, annotations } }),
    ).catch((err: unknown) =>
      this.ctx.logger.warn({ err, claim: claimKey(claim) }, 'could not remove the selected node from a claim whose provisioning failed'),
    );
  }

  /** Lets a claim being deleted go once no pod that is still running mounts it. */
  private async releaseClaimProtection(claim: PersistentVolumeClaim): Promise<void> {
    const finalizers = claim.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER.PVC_PROTECTION)) return;
    if (isClaimInUse(claim, this.pods.byIndex(PODS_BY_CLAIM, claimKey(claim)))) return;
    // The cache may not have a pod created a moment ago yet: the API server has the last word before the claim goes.
    const live = await this.ctx.client.list<Pod>(RESOURCES.pods, claim.metadata.namespace);
    if (isClaimInUse(claim, live.items)) return;
    await this.ignoringGone(() =>
      this.ctx.client.update(RESOURCES.persistentvolumeclaims, {
        ...{},
        ...claim,
        metadata: { ...{}, ...claim.metadata, finalizers: finalizers.filter((finalizer) => finalizer !== FINALIZER.PVC_PROTECTION) },
      }),
    );
  }

  // ---- volumes --------------------------------------------------------------------------------------

  async syncVolume(name: string): Promise<void> {
    const volume = this.volumes.get(name);
    if (!volume) return;
    const ref = volume.spec.claimRef;
    const claim = ref?.name ? await this.claimFor(ref) : undefined;
    // A claimRef with a uid names one claim; once that claim is gone, the volume is released for good.
    const released = !!ref?.uid && claim?.metadata.uid !== ref.uid;

    if (volume.metadata.deletionTimestamp) return this.finishVolumeDeletion(volume, released);
    if (released) return this.reclaim(volume);
    if (!ref?.name || !claim) {
      await this.setVolumePhase(volume, 'Available');
    } else if (claim.spec?.volumeName === name) {
      await this.setVolumePhase(volume, 'Bound');
    } else if (claim.spec?.volumeName && ref.uid && volume.metadata.annotations?.[ANNOTATION.BOUND_BY_CONTROLLER] === 'yes') {
      // The claim went to another volume after we reserved this one for it: free this one again.
      const annotations = { ...volume.metadata.annotations };
      delete annotations[ANNOTATION.BOUND_BY_CONTROLLER];
      const spec = { ...volume.spec };
      delete spec.claimRef;
      const freed = await this.ctx.client.update(RESOURCES.persistentvolumes, { ...{}, ...volume, metadata: { ...{}, ...volume.metadata, annotations }, spec });
      await this.setVolumePhase(freed, 'Available');
    }
  }

  /**
   * The claim is gone: the volume is Released, then reclaimed by its policy. Delete removes our own
   * volumes with their directory; a volume of someone else's cannot be deleted by us and is Failed, as
   * upstream marks a volume no plugin can delete. Recycle (deprecated upstream) is not done either.
   */
  private async reclaim(volume: PersistentVolume): Promise<void> {
    const policy = volume.spec.persistentVolumeReclaimPolicy ?? 'Retain';
    if (policy === 'Retain') {
      await this.setVolumePhase(volume, 'Released');
      return;
    }
    if (policy === 'Delete' && this.isOurs(volume)) {
      await this.setVolumePhase(volume, 'Released');
      await this.options.directories.remove(volume.spec.hostPath!.path);
      await this.ignoringGone(() => this.ctx.client.delete(RESOURCES.persistentvolumes, volume.metadata.name!));
      this.ctx.logger.info({ volume: volume.metadata.name }, 'deleted a released volume and its directory');
      return;
    }
    const message =
      policy === 'Delete'
        ? `error getting deleter volume plugin for volume "${volume.metadata.name}": no deletable volume plugin matched`
        : `recycling is not supported for volume "${volume.metadata.name}"`;
    if (volume.status?.phase === 'Failed') return;
    this.ctx.recorder.event(volume, 'Warning', policy === 'Delete' ? 'VolumeFailedDelete' : 'VolumeFailedRecycle', message);
    await this.ctx.client.updateStatus(RESOURCES.persistentvolumes, { ...{}, ...volume, status: { ...{}, ...volume.status, phase: 'Failed', message } });
  }

  /** pv-protection: a volume being deleted stays while a claim is bound to it; ours with the Delete policy take their directory along. */
  private async finishVolumeDeletion(volume: PersistentVolume, released: boolean): Promise<void> {
    const finalizers = volume.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER.PV_PROTECTION)) return;
    if (volume.status?.phase === 'Bound' && !released) return;
    if (this.isOurs(volume) && volume.spec.persistentVolumeReclaimPolicy === 'Delete') await this.options.directories.remove(volume.spec.hostPath!.path);
    await this.ignoringGone(() =>
      this.ctx.client.update(RESOURCES.persistentvolumes, {
        ...{},
        ...volume,
        metadata: { ...{}, ...volume.metadata, finalizers: finalizers.filter((finalizer) => finalizer !== FINALIZER.PV_PROTECTION) },
      }),
    );
  }

  /** Provisioned by us, with a directory inside our folder (anything else is never removed from disk). */
  private isOurs(volume: PersistentVolume): boolean {
    const path = volume.spec.hostPath?.path;
    return volume.metadata.annotations?.[ANNOTATION.PROVISIONED_BY] === this.options.provisioner && !!path && this.options.directories.contains(path);
  }

  private async setVolumePhase(volume: PersistentVolume, phase: NonNullable<PersistentVolume['status']>['phase']): Promise<PersistentVolume> {
    if (volume.status?.phase === phase) return volume;
    return this.ctx.client.updateStatus(RESOURCES.persistentvolumes, { ...{}, ...volume, status: { phase } });
  }

  // ---- helpers --------------------------------------------------------------------------------------

  /** The claim a claimRef names: from the cache, or (the cache may lag behind a new claim) from the API server. */
  private async claimFor(ref: ObjectReference): Promise<PersistentVolumeClaim | undefined> {
    const cached = this.claims.get(`${ref.namespace}/${ref.name}`);
    if (cached) return cached;
    try {
      return await this.ctx.client.get<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, ref.name!, ref.namespace);
    } catch (err) {
      if (isApiError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  private async liveVolume(name: string): Promise<PersistentVolume | undefined> {
    try {
      return await this.ctx.client.get<PersistentVolume>(RESOURCES.persistentvolumes, name);
    } catch (err) {
      if (isApiError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  private enqueuePendingClaims(filter: (claim: PersistentVolumeClaim) => boolean): void {
    for (const claim of this.claims.list()) {
      if (claim.status?.phase !== 'Bound' && !claim.spec?.volumeName && filter(claim)) this.queue.add(claimItem(claimKey(claim)));
    }
  }

  private report(claim: PersistentVolumeClaim, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const key = claimKey(claim);
    if (this.reported.get(key) === `${reason}:${message}`) return;
    this.reported.set(key, `${reason}:${message}`);
    this.ctx.recorder.event(claim, type, reason, message);
  }

  private async ignoringGone(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
  }
}
