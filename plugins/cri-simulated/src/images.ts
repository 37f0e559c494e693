import { createHash } from 'node:crypto';

/**
 * The fully qualified form a container runtime stores an image under:
 * "nginx" → "docker.io/library/nginx:latest", "me/app:1" → "docker.io/me/app:1".
 */
export function normalizeImage(image: string): string {
  const slash = image.indexOf('/');
  const first = slash < 0 ? '' : image.slice(0, slash);
  const hasRegistry = first.includes('.') || first.includes(':') || first === 'localhost';
  let name = hasRegistry ? image : `docker.io/${slash < 0 ? `library/${image}` : image}`;
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  if (!name.includes('@') && !lastSegment.includes(':')) name += ':latest';
  return name;
}

/** A stable digest for an image name, so every pull of "nginx" yields the same imageRef. */
export function imageDigest(image: string): string {
  return `sha256:${createHash('sha256').update(normalizeImage(image)).digest('hex')}`;
}

/** "docker.io/library/nginx@sha256:…": how a runtime reports the image a container runs (kubectl's Image ID). */
export function repoDigest(image: string): string {
  const normalized = normalizeImage(image);
  const at = normalized.indexOf('@');
  const repository = at >= 0 ? normalized.slice(0, at) : normalized.slice(0, normalized.lastIndexOf(':'));
  return `${repository}@${imageDigest(image)}`;
}

/** A plausible, stable image size (10–100 MB) derived from the digest. */
export function imageSize(image: string): number {
  const digest = imageDigest(image);
  return 10_000_000 + (parseInt(digest.slice(7, 15), 16) % 90_000_000);
}
