import type { Node, Pod } from '@skiff/api';
import type { SchedulerHandle, SchedulerPlugin, SchedulerSnapshot } from '@skiff/kernel';
import { MAX_NODE_SCORE, normalizedImageName } from '@skiff/scheduler';
import { ImageLocalityError } from './errors.js';
import { IMAGE_LOCALITY } from './names.js';

const PRE_SCORE_KEY = `PreScore${IMAGE_LOCALITY}`;
const MB = 1024 * 1024;
/** Below this an image is cheap to pull anyway; upstream's bounds cover most registry images. */
export const MIN_THRESHOLD = 23 * MB;
/** Above this per container, a bigger image earns no more. */
export const MAX_CONTAINER_THRESHOLD = 1000 * MB;

/** The pod's container images and how far each has spread (nodes holding it / all nodes). */
interface PodImages {
  images: string[];
  spreads: number[];
}

/** The sizes of the images a node reports (status.images), by normalized name; derived once per Node object. */
const sizesByNode = new WeakMap<Node, Map<string, number>>();

export function nodeImageSizes(node: Node): Map<string, number> {
  let sizes = sizesByNode.get(node);
  if (sizes) return sizes;
  sizes = new Map();
  for (const image of node.status?.images ?? []) {
    for (const name of image.names ?? []) {
      const normalized = normalizedImageName(name);
      if (!sizes.has(normalized)) sizes.set(normalized, image.sizeBytes ?? 0);
    }
  }
  sizesByNode.set(node, sizes);
  return sizes;
}

function podImages(pod: Pod, snapshot: SchedulerSnapshot): PodImages {
  const total = snapshot.nodes.length;
  const images = (pod.spec.containers ?? []).map((container) => normalizedImageName(container.image ?? ''));
  return { images, spreads: images.map((image) => (total === 0 ? 0 : snapshot.imageNodeCount(image) / total)) };
}

/**
 * The node's score from the summed image scores: clamped to [23MB, 1000MB × containers], then scaled to
 * 0..100 (integer division as upstream).
 */
export function imageLocalityPriority(sumScores: number, containers: number): number {
  const maxThreshold = MAX_CONTAINER_THRESHOLD * containers;
  if (maxThreshold <= MIN_THRESHOLD) return 0;
  const clamped = Math.min(Math.max(sumScores, MIN_THRESHOLD), maxThreshold);
  return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (maxThreshold - MIN_THRESHOLD));
}

/**
 * ImageLocality: prefers nodes that already hold the pod's container images (init containers aside), so
 * the pod starts without a long pull. Each image present counts its size × its spread over the cluster's
 * nodes, so an image on every node gives no node an edge and pods do not pile onto the one node that
 * pulled it first. Default weight 1.
 */
export function createImageLocality(): SchedulerPlugin {
  let handle: SchedulerHandle | undefined;
  return {
    name: IMAGE_LOCALITY,
    defaultWeight: 1,
    init(given) {
      handle = given;
    },
    preScore(state, pod, _nodes, snapshot) {
      const images = podImages(pod, snapshot);
      // No node holds any of the images: every node would score 0, so the scores need not be asked for.
      if (images.spreads.every((spread) => spread === 0)) return { code: 'Skip', reasons: [] };
      state.set(PRE_SCORE_KEY, images);
      return null;
    },
    score(state, pod, info) {
      let wanted = state.get(PRE_SCORE_KEY) as PodImages | undefined;
      if (!wanted) {
        if (!handle) throw new ImageLocalityError('SKIFF_ERR_IMAGE_LOCALITY_NO_SNAPSHOT', { pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
        wanted = podImages(pod, handle.snapshot());
      }
      const sizes = nodeImageSizes(info.node);
      let sum = 0;
      for (let i = 0; i < wanted.images.length; i++) {
        const size = sizes.get(wanted.images[i]!);
        if (size !== undefined) sum += Math.trunc(size * wanted.spreads[i]!);
      }
      return imageLocalityPriority(sum, wanted.images.length);
    },
  };
}
