import { APISERVER_PACKAGE } from '../package-info.js';

/**
 * The Kubernetes version Skiff speaks: 1.36, whose API definitions the generated facts come from. The
 * kubectl on PATH here is a dispatcher that runs `kubectl.1.<minor>` for the minor reported, falling back to
 * its own default (1.32) for minors it does not carry.
 */
export const KUBERNETES_MAJOR = '1';
export const KUBERNETES_MINOR = '36';
export const SKIFF_VERSION = APISERVER_PACKAGE.version;
export const GIT_VERSION = `v${KUBERNETES_MAJOR}.${KUBERNETES_MINOR}.0-skiff.${SKIFF_VERSION}`;

const GO_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

/** GET /version */
export function versionInfo() {
  return {
    major: KUBERNETES_MAJOR,
    minor: KUBERNETES_MINOR,
    gitVersion: GIT_VERSION,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: `node${process.versions.node}`,
    compiler: 'skiff',
    platform: `${process.platform}/${GO_ARCH[process.arch] ?? process.arch}`,
  };
}
