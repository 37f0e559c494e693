import { describe, expect, it } from 'vitest';
import type { ObjectMeta, PodSpec } from '@skiff/api';
import { describeViolations, PolicyEvaluator } from './evaluator.js';
import { parseVersion, type Level } from './policy.js';

const evaluator = new PolicyEvaluator();

/** A one-container pod ("c"), `spec` merged in; `container` merged into the container. */
const pod = (spec: Partial<PodSpec> = {}, container: Record<string, unknown> = {}, metadata: ObjectMeta = {}) => ({
  metadata,
  spec: { containers: [{ name: 'c', image: 'nginx', ...container }], ...spec } as PodSpec,
});

/** What the pod violates at `level:version`, as the message lists it ('' when it passes). */
const check = (level: Level, version: string, subject: ReturnType<typeof pod>) =>
  describeViolations(evaluator.evaluate({ level, version: parseVersion(version)! }, subject));

/** The container settings that pass every restricted check. */
const HARDENED = {
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
};
const hardened = (securityContext: Record<string, unknown> = {}, spec: Partial<PodSpec> = {}, metadata: ObjectMeta = {}) =>
  pod(spec, { securityContext: { ...HARDENED.securityContext, ...securityContext } }, metadata);

/** Checks `subject` is refused with `expected` at baseline and restricted (latest), and passes at privileged. */
function expectBaseline(subject: ReturnType<typeof pod>, expected: string): void {
  expect(check('privileged', 'latest', subject)).toBe('');
  expect(check('baseline', 'latest', subject)).toBe(expected);
  expect(check('restricted', 'latest', subject)).toContain(expected);
}

describe('baseline checks', () => {
  it('passes a plain pod at baseline, and a hardened one at restricted', () => {
    expect(check('baseline', 'latest', pod())).toBe('');
    expect(check('restricted', 'latest', hardened())).toBe('');
  });

  it('hostProcess: the pod and containers may not be Windows host processes', () => {
    const subject = hardened({ windowsOptions: { hostProcess: true } }, { securityContext: { windowsOptions: { hostProcess: true } } });
    expectBaseline(subject, 'hostProcess (pod and container "c" must not set securityContext.windowsOptions.hostProcess=true)');
  });

  it('host namespaces: hostNetwork, hostPID and hostIPC', () => {
    expectBaseline(hardened({}, { hostNetwork: true, hostPID: true, hostIPC: true }), 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)');
    expect(check('baseline', 'latest', pod({ hostNetwork: false }))).toBe('');
  });

  it('privileged containers, init and ephemeral ones included, in that order', () => {
    const subject = hardened({ privileged: true });
    subject.spec.initContainers = [{ name: 'init', image: 'busybox', securityContext: { ...HARDENED.securityContext, privileged: true } }];
    subject.spec.ephemeralContainers = [{ name: 'debug', image: 'busybox', securityContext: { ...HARDENED.securityContext, privileged: true } }];
    expectBaseline(subject, 'privileged (containers "init", "c", "debug" must not set securityContext.privileged=true)');
  });

  it('capabilities beyond the default set; restricted replaces the check with its own from 1.22', () => {
    const subject = pod({}, { securityContext: { capabilities: { add: ['SYS_ADMIN', 'NET_RAW', 'CHOWN', 'NET_RAW'] } } });
    expect(check('privileged', 'latest', subject)).toBe('');
    expect(check('baseline', 'latest', subject)).toBe(
      'non-default capabilities (container "c" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
    );
    expect(check('baseline', 'latest', pod({}, { securityContext: { capabilities: { add: ['CHOWN', 'NET_BIND_SERVICE'] } } }))).toBe('');
    const restricted = hardened({ capabilities: { add: ['SYS_ADMIN', 'CHOWN'] } });
    expect(check('restricted', 'latest', restricted)).toBe(
      'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "CHOWN", "SYS_ADMIN" in securityContext.capabilities.add)',
    );
    expect(check('restricted', 'v1.21', restricted)).toBe(
      'non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
    );
  });

  it('hostPath volumes; restricted names them as a restricted volume type', () => {
    const subject = hardened(
      {},
      {
        volumes: [
          { name: 'data', hostPath: { path: '/var' } },
          { name: 'tmp', emptyDir: {} },
        ],
      },
    );
    expect(check('baseline', 'latest', subject)).toBe('hostPath volumes (volume "data")');
    expect(check('restricted', 'latest', subject)).toBe('restricted volume types (volume "data" uses restricted volume type "hostPath")');
  });

  it('hostPorts, distinct and sorted as text', () => {
    const subject = hardened({}, { containers: [] });
    subject.spec.containers = [
      {
        name: 'a',
        image: 'x',
        ports: [
          { containerPort: 80, hostPort: 8080 },
          { containerPort: 81, hostPort: 80 },
        ],
        ...HARDENED,
      },
      { name: 'b', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 82 }], ...HARDENED },
    ];
    expectBaseline(subject, 'hostPort (containers "a", "b" use hostPorts 80, 8080)');
    expect(check('baseline', 'latest', pod({}, { ports: [{ containerPort: 80, hostPort: 0 }] }))).toBe('');
  });

  it('probe and lifecycle hosts from 1.34 on', () => {
    const subject = hardened({}, {}, {});
    Object.assign(subject.spec.containers[0]!, {
      livenessProbe: { httpGet: { host: '10.0.0.9', port: 80 } },
      lifecycle: { preStop: { tcpSocket: { host: '10.0.0.1', port: 80 } } },
    });
    expectBaseline(subject, 'probe or lifecycle host (container "c" uses probe or lifecycle hosts "10.0.0.1", "10.0.0.9")');
    expect(check('baseline', 'v1.33', subject)).toBe('');
  });

  it('AppArmor: profile types and the beta annotations', () => {
    const subject = hardened(
      { appArmorProfile: { type: 'Unconfined' } },
      {},
      { annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' } },
    );
    subject.spec.securityContext = { appArmorProfile: { type: 'Unconfined' } };
    expectBaseline(
      subject,
      'forbidden AppArmor profiles (pod and container "c" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/c="unconfined"")',
    );
    const allowed = pod(
      { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'x' } } },
      {},
      { annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'runtime/default' } },
    );
    expect(check('baseline', 'latest', allowed)).toBe('');
  });

  it('SELinux: a type outside the container types, any user or role; container_engine_t from 1.31', () => {
    const subject = hardened({ seLinuxOptions: { type: 'spc_t', user: 'root' } }, { securityContext: { seLinuxOptions: { role: 'sysadm_r' } } });
    expectBaseline(
      subject,
      'seLinuxOptions (pod and container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)',
    );
    const engine = pod({ securityContext: { seLinuxOptions: { type: 'container_engine_t', level: 's0:c1' } } });
    expect(check('baseline', 'latest', engine)).toBe('');
    expect(check('baseline', 'v1.30', engine)).toBe('seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "container_engine_t")');
  });

  it('procMount: Unmasked is refused; from 1.35 baseline allows it in a user namespace, restricted never does', () => {
    expectBaseline(hardened({ procMount: 'Unmasked' }), 'procMount (container "c" must not set securityContext.procMount to "Unmasked")');
    const userNamespaced = hardened({ procMount: 'Unmasked' }, { hostUsers: false });
    expect(check('baseline', 'latest', userNamespaced)).toBe('');
    expect(check('baseline', 'v1.34', userNamespaced)).toBe('procMount (container "c" must not set securityContext.procMount to "Unmasked")');
    expect(check('restricted', 'latest', userNamespaced)).toBe('procMount (container "c" must not set securityContext.procMount to "Unmasked")');
    expect(check('baseline', 'latest', pod({}, { securityContext: { procMount: 'Default' } }))).toBe('');
  });

  it('seccomp: Unconfined is refused; before 1.19 the annotations are checked instead', () => {
    expectBaseline(
      hardened({ seccompProfile: { type: 'Unconfined' } }, { securityContext: { seccompProfile: { type: 'Unconfined' } } }),
      'seccompProfile (pod and container "c" must not set securityContext.seccompProfile.type to "Unconfined")',
    );
    const annotated = pod(
      {},
      {},
      { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.seccomp.security.alpha.kubernetes.io/c': 'docker/default' } },
    );
    expect(check('baseline', 'v1.18', annotated)).toBe('seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")');
    expect(check('baseline', 'latest', annotated)).toBe('');
  });

  it('sysctls outside the safe set, which grew in 1.27, 1.29 and 1.32', () => {
    const subject = hardened(
      {},
      {
        securityContext: {
          sysctls: [
            { name: 'kernel.msgmax', value: '1' },
            { name: 'net.ipv4.tcp_rmem', value: '1 2 3' },
          ],
        },
      },
    );
    subject.spec.securityContext!.seccompProfile = { type: 'RuntimeDefault' };
    expectBaseline(subject, 'forbidden sysctls (kernel.msgmax)');
    expect(check('baseline', 'v1.31', subject)).toBe('forbidden sysctls (kernel.msgmax, net.ipv4.tcp_rmem)');
    const keepalive = pod({ securityContext: { sysctls: [{ name: 'net.ipv4.tcp_keepalive_time', value: '60' }] } });
    expect(check('baseline', 'v1.29', keepalive)).toBe('');
    expect(check('baseline', 'v1.28', keepalive)).toBe('forbidden sysctls (net.ipv4.tcp_keepalive_time)');
  });
});

describe('restricted checks', () => {
  const DEFAULT_POD_MESSAGE =
    'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
    'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
    'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
    'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

  it('lists what a pod with no security context misses, in kube-apiserver order', () => {
    expect(check('restricted', 'latest', pod())).toBe(DEFAULT_POD_MESSAGE);
    expect(check('baseline', 'latest', pod())).toBe('');
  });

  it('lists baseline violations before restricted ones', () => {
    expect(check('restricted', 'latest', pod({}, { securityContext: { privileged: true } }))).toBe(
      `privileged (container "c" must not set securityContext.privileged=true), ${DEFAULT_POD_MESSAGE}`,
    );
  });

  it('allowPrivilegeEscalation must be false, from 1.8', () => {
    const subject = hardened({ allowPrivilegeEscalation: true });
    expect(check('restricted', 'latest', subject)).toBe(
      'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
    );
    expect(check('restricted', 'v1.7', subject)).not.toContain('allowPrivilegeEscalation');
  });

  it('capabilities: drop ALL, add only NET_BIND_SERVICE', () => {
    expect(check('restricted', 'latest', hardened({ capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } }))).toBe('');
    expect(check('restricted', 'latest', hardened({ capabilities: { drop: ['NET_RAW'] } }))).toBe(
      'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])',
    );
  });

  it('volume types: only configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim, projected, secret', () => {
    const allowed = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];
    expect(check('restricted', 'latest', hardened({}, { volumes: allowed.map((source) => ({ name: source.toLowerCase(), [source]: {} })) }))).toBe('');
    const subject = hardened(
      {},
      { volumes: [{ name: 'a', nfs: { server: 's', path: '/' } }, { name: 'b', gitRepo: { repository: 'r' } }, { name: 'c', iscsi: {} } as never] },
    );
    expect(check('restricted', 'latest', subject)).toBe(
      'restricted volume types (volumes "a", "b", "c" use restricted volume types "gitRepo", "iscsi", "nfs")',
    );
    expect(check('baseline', 'latest', subject)).toBe('');
  });

  it('runAsNonRoot: explicit false is named; unset containers are covered by the pod', () => {
    expect(check('restricted', 'latest', hardened({ runAsNonRoot: false }, { securityContext: { runAsNonRoot: false } }))).toBe(
      'runAsNonRoot != true (pod and container "c" must not set securityContext.runAsNonRoot=false)',
    );
    const covered = hardened({ runAsNonRoot: undefined }, { securityContext: { runAsNonRoot: true } });
    expect(check('restricted', 'latest', covered)).toBe('');
  });

  it('runAsUser 0 is refused from 1.23', () => {
    const subject = hardened({ runAsUser: 0 }, { securityContext: { runAsUser: 0 } });
    expect(check('restricted', 'latest', subject)).toBe('runAsUser=0 (pod and container "c" must not set runAsUser=0)');
    expect(check('restricted', 'v1.22', subject)).toBe('');
    expect(check('restricted', 'latest', hardened({ runAsUser: 1000 }))).toBe('');
  });

  it('seccomp must be RuntimeDefault or Localhost, on the pod or on every container', () => {
    expect(
      check(
        'restricted',
        'latest',
        hardened({ seccompProfile: undefined }, { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'p' } } }),
      ),
    ).toBe('');
    expect(check('restricted', 'latest', hardened({ seccompProfile: { type: 'Unconfined' } }))).toBe(
      'seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")',
    );
  });

  it('Windows pods skip the Linux-only rules from 1.25', () => {
    const windows = pod({ os: { name: 'windows' } });
    expect(check('restricted', 'latest', windows)).toBe('runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)');
    expect(check('restricted', 'v1.24', windows)).toBe(DEFAULT_POD_MESSAGE);
  });

  it('user-namespaced pods may run as root from 1.35', () => {
    const subject = hardened({ runAsNonRoot: false, runAsUser: 0 }, { hostUsers: false });
    expect(check('restricted', 'latest', subject)).toBe('');
    expect(check('restricted', 'v1.34', subject)).toBe(
      'runAsNonRoot != true (container "c" must not set securityContext.runAsNonRoot=false), runAsUser=0 (container "c" must not set runAsUser=0)',
    );
  });

  it('pinned versions newer than Skiff evaluate as latest', () => {
    const subject = pod({}, { securityContext: { privileged: true } });
    expect(check('restricted', 'v1.99', subject)).toBe(check('restricted', 'latest', subject));
  });
});
