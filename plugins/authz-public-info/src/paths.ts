/**
 * Non-resource URL rules in RBAC's syntax: an exact path, or a prefix ending in `*` ("/healthz/*" matches
 * "/healthz/ping"; "*" alone matches every path).
 */
export const NON_RESOURCE_URL_PATTERN = '^(\\*|/[^*]*\\*?)$';

/** What Kubernetes's ClusterRole system:public-info-viewer grants, plus the health checks' sub-paths. */
export const PUBLIC_INFO_PATHS: readonly string[] = Object.freeze([
  '/healthz',
  '/healthz/*',
  '/livez',
  '/livez/*',
  '/readyz',
  '/readyz/*',
  '/version',
  '/version/',
]);

/** Discovery and OpenAPI, which Kubernetes grants only to authenticated users (system:discovery). */
export const DISCOVERY_PATHS: readonly string[] = Object.freeze(['/api', '/api/*', '/apis', '/apis/*', '/openapi/v2', '/openapi/v3', '/openapi/v3/*']);

export type PathMatcher = (path: string) => boolean;

/** Compiles rules once: exact paths go in a set, prefixes in a list, so a request costs one lookup and a short scan. */
export function pathMatcher(rules: readonly string[]): PathMatcher {
  const exact = new Set(rules.filter((rule) => !rule.endsWith('*')));
  const prefixes = rules.filter((rule) => rule.endsWith('*')).map((rule) => rule.slice(0, -1));
  return (path) => exact.has(path) || prefixes.some((prefix) => path.startsWith(prefix));
}
