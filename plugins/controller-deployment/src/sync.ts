import { errorMessage, isApiError, RESOURCES, type Deployment, type DeploymentStatus, type Pod, type ReplicaSet } from '@skiff/api';
import { controllerRefOf, newControllerRef, templateHash } from '@skiff/controller-manager';
import type { ApiClient, EventRecorder } from '@skiff/kernel';
import { maxRevision, setNewReplicaSetAnnotations, setReplicasAnnotationsFor } from './annotations.js';
import { getCondition, newCondition, setCondition } from './conditions.js';
import { replicaSetsToCleanUp } from './history.js';
import { ANNOTATION, CONDITION, EVENT_REASON, REASON } from './names.js';
import { buildNewReplicaSet, equalIgnoreHash, findNewReplicaSet } from './new-replicaset.js';
import { proportionalScale } from './proportional.js';
import { oldPodsRunning } from './recreate.js';
import { activeReplicaSets } from './replicasets.js';
import { newReplicaSetReplicas, planNewReplicaSetScale, planOldReplicaSetsScaleDown } from './rolling.js';
import { findActiveOrLatest, isSaturated, isScalingEvent } from './scaling.js';
import { calculateStatus, deploymentComplete, progressCheckDelay, rolloutStatus, sameStatus } from './status.js';
import { desiredReplicas, hasProgressDeadline, isRecreate, replicasOf } from './spec.js';

export interface SyncDeps {
  client: ApiClient;
  recorder: EventRecorder;
  /** Pods controlled by a ReplicaSet (from the pod informer). */
  podsOf(rs: ReplicaSet): Pod[];
  /** Looks at this Deployment again after `ms`, even if nothing changes. */
  requeueAfter(ms: number): void;
  now(): number;
}

interface ReplicaSetsOfDeployment {
  newRS: ReplicaSet | undefined;
  oldRSs: ReplicaSet[];
}

/**
 * One pass of the deployment controller over one Deployment, like kube-controller-manager's
 * syncDeployment. It holds the Deployment and its ReplicaSets as last written, so each step of the
 * pass builds on the previous one's result rather than on the (older) informer copies.
 */
export class DeploymentSync {
  private deployment: Deployment;
  private readonly replicaSets = new Map<string, ReplicaSet>();
  private newReplicaSetUid?: string;

  constructor(
    private readonly deps: SyncDeps,
    deployment: Deployment,
    owned: readonly ReplicaSet[],
  ) {
    this.deployment = structuredClone(deployment);
    for (const rs of owned) this.replicaSets.set(rs.metadata.uid!, rs);
  }

  async run(): Promise<void> {
    if (this.deployment.metadata.deletionTimestamp) return this.syncStatusOnly();
    await this.checkPausedCondition();
    if (this.deployment.spec.paused || (await this.isScalingEvent())) return this.syncScale();
    return isRecreate(this.deployment) ? this.rolloutRecreate() : this.rolloutRolling();
  }

  // ---- the four kinds of pass -----------------------------------------------------------------------

  /** A Deployment being deleted only reports what is left. */
  private async syncStatusOnly(): Promise<void> {
    await this.getReplicaSets(false);
    await this.syncStatus();
  }

  /** A resize or a paused Deployment: scale without rolling out, then report. */
  private async syncScale(): Promise<void> {
    const { newRS, oldRSs } = await this.getReplicaSets(false);
    await this.scale(newRS, oldRSs);
    if (this.deployment.spec.paused) await this.cleanUp();
    await this.syncStatus();
  }

  /** Grows the new ReplicaSet within maxSurge, then shrinks old ones within maxUnavailable, one step per pass. */
  private async rolloutRolling(): Promise<void> {
    const { newRS, oldRSs } = await this.getReplicaSets(true);
    const allRSs = [...oldRSs, newRS!];
    const newSize = planNewReplicaSetScale(this.deployment, allRSs, newRS!);
    if (newSize !== undefined) {
      await this.scaleReplicaSet(newRS!, newSize);
      return this.syncRolloutStatus();
    }
    const scaleDowns = planOldReplicaSetsScaleDown(this.deployment, allRSs, oldRSs, newRS!);
    if (scaleDowns.length > 0) {
      for (const { rs, replicas } of scaleDowns) await this.scaleReplicaSet(rs, replicas);
      return this.syncRolloutStatus();
    }
    if (deploymentComplete(this.deployment, this.deployment.status ?? {})) await this.cleanUp();
    return this.syncRolloutStatus();
  }

  /** Scales every old ReplicaSet to zero, waits until their pods are gone, then scales the new one up. */
  private async rolloutRecreate(): Promise<void> {
    const { oldRSs } = await this.getReplicaSets(false);
    let scaledDown = false;
    for (const rs of activeReplicaSets(oldRSs)) scaledDown = (await this.scaleReplicaSet(rs, 0)) || scaledDown;
    if (scaledDown || oldPodsRunning(this.current().oldRSs, this.deps.podsOf)) return this.syncRolloutStatus();

    const { newRS } = await this.getReplicaSets(true);
    await this.scaleReplicaSet(newRS!, desiredReplicas(this.deployment));
    if (deploymentComplete(this.deployment, this.deployment.status ?? {})) await this.cleanUp();
    return this.syncRolloutStatus();
  }

  // ---- steps ---------------------------------------------------------------------------------------

  /** kubectl rollout pause / resume show as Progressing Unknown with reason DeploymentPaused / DeploymentResumed. */
  private async checkPausedCondition(): Promise<void> {
    const d = this.deployment;
    if (!hasProgressDeadline(d)) return;
    const progressing = getCondition(d.status, CONDITION.PROGRESSING);
    if (progressing?.reason === REASON.TIMED_OUT) return;
    const pausedShown = progressing?.reason === REASON.PAUSED;
    const now = this.deps.now();
    if (d.spec.paused && !pausedShown)
      await this.writeStatus(setCondition(d.status ?? {}, newCondition(CONDITION.PROGRESSING, 'Unknown', REASON.PAUSED, 'Deployment is paused', now)));
    else if (!d.spec.paused && pausedShown)
      await this.writeStatus(setCondition(d.status ?? {}, newCondition(CONDITION.PROGRESSING, 'Unknown', REASON.RESUMED, 'Deployment is resumed', now)));
  }

  private async isScalingEvent(): Promise<boolean> {
    const { newRS, oldRSs } = await this.getReplicaSets(false);
    return isScalingEvent(this.deployment, [...oldRSs, newRS]);
  }

  /** Applies `spec.replicas`: to the only active ReplicaSet directly, or proportionally during a rollout. */
  private async scale(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): Promise<void> {
    const d = this.deployment;
    const target = findActiveOrLatest(newRS, oldRSs);
    if (target) {
      await this.scaleReplicaSet(target, desiredReplicas(d));
      return;
    }
    if (isSaturated(d, newRS)) {
      for (const rs of activeReplicaSets(oldRSs)) await this.scaleReplicaSet(rs, 0);
      return;
    }
    for (const { rs, replicas } of proportionalScale(d, activeReplicaSets([...oldRSs, newRS]))) await this.scaleReplicaSet(rs, replicas);
  }

  /** Deletes old ReplicaSets beyond revisionHistoryLimit. */
  private async cleanUp(): Promise<void> {
    for (const rs of replicaSetsToCleanUp(this.deployment, this.current().oldRSs)) {
      try {
        await this.deps.client.delete(RESOURCES.replicasets, rs.metadata.name!, rs.metadata.namespace, { propagationPolicy: 'Background' });
      } catch (err) {
        if (!isApiError(err, 'NotFound')) throw err;
      }
      this.replicaSets.delete(rs.metadata.uid!);
    }
  }

  private async syncStatus(): Promise<void> {
    const { newRS, oldRSs } = this.current();
    const status = calculateStatus(this.deployment, newRS ? [...oldRSs, newRS] : oldRSs, newRS, this.deps.now());
    if (!sameStatus(this.deployment.status, status)) await this.writeStatus(status);
  }

  private async syncRolloutStatus(): Promise<void> {
    const { newRS, oldRSs } = this.current();
    const now = this.deps.now();
    const status = rolloutStatus(this.deployment, newRS ? [...oldRSs, newRS] : oldRSs, newRS, now);
    if (!sameStatus(this.deployment.status, status)) return this.writeStatus(status);
    // Nothing changed: make sure a stalled rollout is still looked at when its deadline runs out.
    const delay = progressCheckDelay(this.deployment, status, now);
    if (delay !== undefined) this.deps.requeueAfter(Math.max(delay, 1000));
  }

  // ---- the new ReplicaSet --------------------------------------------------------------------------

  /**
   * Splits the Deployment's ReplicaSets into the one for its current template and the old ones, bringing
   * the new one's annotations (revision, copied annotations) up to date, and creating it if asked to.
   */
  private async getReplicaSets(createIfMissing: boolean): Promise<ReplicaSetsOfDeployment> {
    const all = [...this.replicaSets.values()];
    const existing = findNewReplicaSet(this.deployment, all);
    const oldRSs = all.filter((rs) => rs !== existing);
    const newRevision = maxRevision(oldRSs) + 1n;
    let newRS: ReplicaSet | undefined;
    if (existing) newRS = await this.syncNewReplicaSet(existing, newRevision);
    else if (createIfMissing) newRS = await this.createNewReplicaSet(oldRSs, newRevision);
    this.newReplicaSetUid = newRS?.metadata.uid;
    return this.current();
  }

  private async syncNewReplicaSet(existing: ReplicaSet, newRevision: bigint): Promise<ReplicaSet> {
    const d = this.deployment;
    const copy = structuredClone(existing);
    const annotationsChanged = setNewReplicaSetAnnotations(d, copy, newRevision, true);
    const minReadySecondsChanged = (copy.spec.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0);
    let rs = existing;
    if (annotationsChanged || minReadySecondsChanged) {
      copy.spec.minReadySeconds = d.spec.minReadySeconds ?? 0;
      rs = await this.updateReplicaSet(copy);
    }
    await this.setDeploymentRevision(rs.metadata.annotations?.[ANNOTATION.REVISION]);
    if (hasProgressDeadline(d) && !getCondition(this.deployment.status, CONDITION.PROGRESSING)) {
      const found = newCondition(CONDITION.PROGRESSING, 'True', REASON.FOUND_NEW_RS, `Found new replica set "${rs.metadata.name}"`, this.deps.now());
      await this.writeStatus(setCondition(this.deployment.status ?? {}, found));
    }
    return rs;
  }

  private async createNewReplicaSet(oldRSs: ReplicaSet[], newRevision: bigint): Promise<ReplicaSet> {
    const d = this.deployment;
    const hash = templateHash(d.spec.template, d.status?.collisionCount);
    const rs = buildNewReplicaSet(d, hash, newControllerRef(d, RESOURCES.deployments));
    rs.spec.replicas = newReplicaSetReplicas(d, [...oldRSs, rs], rs);
    setNewReplicaSetAnnotations(d, rs, newRevision, false);

    let created: ReplicaSet;
    let createdNow = true;
    try {
      created = await this.deps.client.create<ReplicaSet>(RESOURCES.replicasets, rs, d.metadata.namespace);
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) return this.reportCreateFailure(rs, err);
      created = await this.adoptExistingOrCountCollision(rs, err);
      createdNow = false;
    }
    this.replicaSets.set(created.metadata.uid!, created);

    if (createdNow && replicasOf(created) > 0)
      this.deps.recorder.event(d, 'Normal', EVENT_REASON.SCALING, `Scaled up replica set ${created.metadata.name} to ${replicasOf(created)}`);
    await this.setDeploymentRevision(String(newRevision));
    if (createdNow && hasProgressDeadline(d)) {
      const condition = newCondition(
        CONDITION.PROGRESSING,
        'True',
        REASON.NEW_RS_CREATED,
        `Created new replica set "${created.metadata.name}"`,
        this.deps.now(),
      );
      await this.writeStatus(setCondition(this.deployment.status ?? {}, condition));
    }
    return created;
  }

  /**
   * The name is taken. If by this Deployment's ReplicaSet for the same template (created by an earlier
   * pass the informer has not shown us yet), that is the new ReplicaSet. Otherwise two templates hashed
   * alike: bump collisionCount so the next pass computes a different name, and fail this one.
   */
  private async adoptExistingOrCountCollision(wanted: ReplicaSet, conflict: unknown): Promise<ReplicaSet> {
    const d = this.deployment;
    const existing = await this.deps.client.get<ReplicaSet>(RESOURCES.replicasets, wanted.metadata.name!, d.metadata.namespace);
    if (controllerRefOf(existing)?.uid === d.metadata.uid && equalIgnoreHash(d.spec.template, existing.spec.template)) return existing;
    await this.writeStatus({ ...{}, ...d.status, collisionCount: (d.status?.collisionCount ?? 0) + 1 });
    throw conflict;
  }

  private async reportCreateFailure(rs: ReplicaSet, err: unknown): Promise<never> {
    const message = `Failed to create new replica set "${rs.metadata.name}": ${errorMessage(err)}`;
    if (hasProgressDeadline(this.deployment)) {
      const failed = newCondition(CONDITION.PROGRESSING, 'False', REASON.RS_CREATE_ERROR, message, this.deps.now());
      await this.writeStatus(setCondition(this.deployment.status ?? {}, failed));
    }
    this.deps.recorder.event(this.deployment, 'Warning', EVENT_REASON.RS_CREATE_ERROR, message);
    throw err;
  }

  // ---- writes --------------------------------------------------------------------------------------

  /**
   * Sets a ReplicaSet's size and records the Deployment size it was scaled for; returns whether the size
   * changed. Writing nothing when nothing changes keeps passes cheap and idempotent.
   */
  private async scaleReplicaSet(rs: ReplicaSet, replicas: number): Promise<boolean> {
    const current = this.replicaSets.get(rs.metadata.uid!) ?? rs;
    const copy = structuredClone(current);
    const sizeChanged = replicasOf(current) !== replicas;
    const annotationsChanged = setReplicasAnnotationsFor(this.deployment, copy);
    if (!sizeChanged && !annotationsChanged) return false;
    copy.spec.replicas = replicas;
    const updated = await this.updateReplicaSet(copy);
    if (sizeChanged) {
      const direction = replicas > replicasOf(current) ? 'up' : 'down';
      this.deps.recorder.event(this.deployment, 'Normal', EVENT_REASON.SCALING, `Scaled ${direction} replica set ${updated.metadata.name} to ${replicas}`);
    }
    return sizeChanged;
  }

  private async updateReplicaSet(rs: ReplicaSet): Promise<ReplicaSet> {
    const updated = await this.deps.client.update<ReplicaSet>(RESOURCES.replicasets, rs);
    this.replicaSets.set(updated.metadata.uid!, updated);
    return updated;
  }

  /** The revision annotation is metadata, so it is patched on the object itself, not through /status. */
  private async setDeploymentRevision(revision: string | undefined): Promise<void> {
    const d = this.deployment;
    if (!revision || d.metadata.annotations?.[ANNOTATION.REVISION] === revision) return;
    const patched = await this.deps.client.patch<Deployment>(
      RESOURCES.deployments,
      d.metadata.name!,
      { metadata: { annotations: { [ANNOTATION.REVISION]: revision } } },
      { namespace: d.metadata.namespace, patchType: 'merge' },
    );
    // Keep our generation: the status we write must only claim to have observed the spec we acted on.
    this.deployment = {
      ...{},
      ...d,
      metadata: { ...{}, ...d.metadata, annotations: patched.metadata.annotations, resourceVersion: patched.metadata.resourceVersion },
    };
  }

  private async writeStatus(status: DeploymentStatus): Promise<void> {
    const updated = await this.deps.client.updateStatus<Deployment>(RESOURCES.deployments, { ...{}, ...this.deployment, status });
    this.deployment = {
      ...{},
      ...this.deployment,
      metadata: { ...{}, ...this.deployment.metadata, resourceVersion: updated.metadata.resourceVersion },
      status: updated.status ?? status,
    };
  }

  /** The new and old ReplicaSets as last written. */
  private current(): ReplicaSetsOfDeployment {
    const all = [...this.replicaSets.values()];
    return {
      newRS: all.find((rs) => rs.metadata.uid === this.newReplicaSetUid),
      oldRSs: all.filter((rs) => rs.metadata.uid !== this.newReplicaSetUid),
    };
  }
}
