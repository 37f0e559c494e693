import { describe, expect, it } from 'vitest';
import { defaultPod, defaultPodSpec } from '../defaults.js';
import type { Pod, PodSpec } from '../types.js';
import { POD_UPDATE_FORBIDDEN_MESSAGE, validatePod } from './pod-update.js';
import { validatePodTemplateSpec } from './pod.js';

function pod(mutate: (p: Pod & Record<string, any>) => void = () => {}): Pod {
  const p = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'u1', labels: { app: 'web' } },
    spec: { containers: [{ name: 'web', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] },
  } as Pod & Record<string, any>;
  mutate(p);
  defaultPod(p);
  return p;
}

const messages = (p: Pod, old?: Pod) => validatePod(p, old).map((c) => `${c.field}: ${c.message}`);

describe('validatePod (create)', () => {
  it('accepts a defaulted pod', () => {
    expect(validatePod(pod())).toEqual([]);
  });

  it('refuses malformed and repeated sysctl names with upstream’s message, as its e2e test sends them', () => {
    const sysctls = [
      { name: 'foo-', value: 'bar' },
      { name: 'kernel.shmmax', value: '100000000' },
      { name: 'safe-and-unsafe', value: '100000000' },
      { name: 'bar..', value: '42' },
      { name: 'net/ipv4/ip_forward', value: '1' },
      { name: 'kernel.shmmax', value: '1' },
      { name: '', value: '1' },
    ];
    const pattern = '^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';
    expect(messages(pod((p) => (p.spec.securityContext = { sysctls })))).toEqual([
      `spec.securityContext.sysctls[0].name: Invalid value: "foo-": must have at most 253 characters and match regex ${pattern}`,
      `spec.securityContext.sysctls[3].name: Invalid value: "bar..": must have at most 253 characters and match regex ${pattern}`,
      'spec.securityContext.sysctls[5].name: Duplicate value: "kernel.shmmax"',
      'spec.securityContext.sysctls[6].name: Required value',
    ]);
  });

  it('checks the object name as a DNS subdomain with Kubernetes’ message', () => {
    expect(messages(pod((p) => (p.metadata.name = 'Web')))).toEqual([
      `metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
  });

  it('requires a name and a namespace, and checks label keys and values', () => {
    const p = pod((x) => {
      x.metadata = { labels: { 'bad key': 'ok', good: 'bad value' } };
    });
    expect(validatePod(p).map((c) => [c.type, c.field])).toEqual([
      ['FieldValueRequired', 'metadata.name'],
      ['FieldValueRequired', 'metadata.namespace'],
      ['FieldValueInvalid', 'metadata.labels'],
      ['FieldValueInvalid', 'metadata.labels'],
    ]);
    expect(validatePod(p)[0]!.message).toBe('Required value: name or generateName is required');
    expect(validatePod(p)[2]!.message).toBe(
      `Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
  });

  it('requires containers, images and unique DNS-label container names', () => {
    expect(messages(pod((p) => (p.spec.containers = [])))).toEqual(['spec.containers: Required value']);
    const p = pod((x) => {
      x.spec.containers = [
        { name: 'web', image: '' },
        { name: 'web', image: 'nginx' },
        { name: 'Side_car', image: 'busybox' },
      ];
    });
    expect(messages(p)).toEqual([
      'spec.containers[0].image: Required value',
      'spec.containers[1].name: Duplicate value: "web"',
      `spec.containers[2].name: Invalid value: "Side_car": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
    ]);
  });

  it('checks port ranges, names and protocols', () => {
    const p = pod((x) => {
      x.spec.containers[0]!.ports = [
        { containerPort: 70000, name: 'http' },
        { containerPort: 81, name: 'http', protocol: 'HTTP' as never, hostPort: 0 },
      ];
    });
    expect(messages(p)).toEqual([
      'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[1].name: Duplicate value: "http"',
      'spec.containers[0].ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    ]);
  });

  it('only allows the restart policies Kubernetes knows', () => {
    expect(messages(pod((p) => (p.spec.restartPolicy = 'Sometimes' as never)))).toEqual([
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
  });

  it('checks resource names and quantities, and that requests do not exceed limits', () => {
    const p = pod((x) => {
      x.spec.containers[0]!.resources = { requests: { cpu: '2', memory: '-1Mi' }, limits: { cpu: '1500m', gpus: '1' } };
    });
    expect(messages(p)).toEqual([
      'spec.containers[0].resources.limits[gpus]: Invalid value: "gpus": must be a standard resource type or fully qualified',
      'spec.containers[0].resources.limits[gpus]: Invalid value: "gpus": must be a standard resource for containers',
      'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit',
      // Defaulting copied the limit into the requests, so the name is reported there too.
      'spec.containers[0].resources.requests[gpus]: Invalid value: "gpus": must be a standard resource type or fully qualified',
      'spec.containers[0].resources.requests[gpus]: Invalid value: "gpus": must be a standard resource for containers',
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0',
    ]);
  });

  it('requires extended resources to request exactly their limit', () => {
    const p = pod((x) => {
      x.spec.containers[0]!.resources = { requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '2' } };
    });
    expect(messages(p)).toEqual(['spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit']);
  });

  it('checks volumes and that mounts name one', () => {
    const p = pod((x) => {
      x.spec.volumes = [
        { name: 'data', emptyDir: {}, hostPath: { path: '/x' } },
        { name: 'cfg', configMap: {} },
      ];
      x.spec.containers[0]!.volumeMounts = [
        { name: 'data', mountPath: '/data' },
        { name: 'logs', mountPath: '/data' },
      ];
    });
    expect(messages(p)).toEqual([
      'spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type',
      'spec.volumes[1].configMap.name: Required value',
      'spec.containers[0].volumeMounts[0].name: Not found: "data"',
      'spec.containers[0].volumeMounts[1].name: Not found: "logs"',
      'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/data": must be unique',
    ]);
  });

  it('checks tolerations', () => {
    const p = pod((x) => {
      x.spec.tolerations = [
        { key: 'k', operator: 'Exists', value: 'v' },
        { operator: 'Equal', value: 'v' },
        { key: 'k', effect: 'NoSchedule', tolerationSeconds: 5 },
      ];
    });
    expect(messages(p)).toEqual([
      'spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'',
      'spec.tolerations[1].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      'spec.tolerations[2].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set',
    ]);
  });

  it('checks environment variable names and init container rules', () => {
    const p = pod((x) => {
      x.spec.containers[0]!.env = [{ name: '1BAD', value: 'x' }];
      x.spec.initContainers = [{ name: 'web', image: 'busybox', livenessProbe: { exec: { command: ['true'] } } }];
    });
    expect(messages(p)).toEqual([
      `spec.containers[0].env[0].name: Invalid value: "1BAD": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')`,
      'spec.initContainers[0].name: Duplicate value: "web"',
      'spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
    ]);
  });

  it('checks owner references and forbids a second controller', () => {
    const p = pod((x) => {
      x.metadata.ownerReferences = [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
        { apiVersion: '', kind: 'ReplicaSet', name: 'b', uid: '', controller: true },
      ];
    });
    expect(messages(p)).toEqual([
      'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
      expect.stringMatching(
        /^metadata\.ownerReferences: Invalid value: \[\]v1\.OwnerReference\{.*\}: Only one reference can have Controller set to true\. Found "true" in references for ReplicaSet\/a and ReplicaSet\/b$/,
      ),
    ]);
  });

  it('limits the total size of annotations', () => {
    expect(messages(pod((p) => (p.metadata.annotations = { big: 'x'.repeat(256 * 1024) })))).toEqual([
      'metadata.annotations: Too long: must have at most 262144 bytes',
    ]);
  });

  it('requires host ports to equal container ports with host networking', () => {
    const p = pod((x) => {
      x.spec.hostNetwork = true;
      x.spec.containers[0]!.ports = [{ containerPort: 80, hostPort: 8080 }];
    });
    expect(messages(p)).toEqual(['spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true']);
  });

  it('lets a pod template with host networking leave host ports 0 (its pods get them), but not set others', () => {
    const spec = { hostNetwork: true, containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 9100 }] }] } as PodSpec;
    defaultPodSpec(spec);
    expect(validatePodTemplateSpec({ metadata: {}, spec }, 'spec.template')).toEqual([]);
    spec.containers[0]!.ports![0]!.hostPort = 9200;
    expect(validatePodTemplateSpec({ metadata: {}, spec }, 'spec.template').map((c) => c.field)).toEqual([
      'spec.template.spec.containers[0].ports[0].hostPort',
    ]);
  });
});

describe('validatePod (update)', () => {
  it('lets the image, activeDeadlineSeconds and new tolerations change, and labels', () => {
    const old = pod((p) => (p.spec.tolerations = [{ key: 'a', operator: 'Exists' }]));
    const next = structuredClone(old);
    next.spec.containers[0]!.image = 'nginx:1.26';
    next.spec.activeDeadlineSeconds = 60;
    next.spec.tolerations = [
      { key: 'a', operator: 'Exists' },
      { key: 'b', operator: 'Exists' },
    ];
    next.metadata.labels = { app: 'web', tier: 'front' };
    expect(validatePod(next, old)).toEqual([]);
  });

  it('forbids any other spec change with Kubernetes’ message', () => {
    const old = pod();
    const next = structuredClone(old);
    next.spec.containers[0]!.ports = [{ containerPort: 8080, protocol: 'TCP' }];
    expect(validatePod(next, old)).toEqual([{ type: 'FieldValueForbidden', field: 'spec', message: `Forbidden: ${POD_UPDATE_FORBIDDEN_MESSAGE}` }]);
    expect(POD_UPDATE_FORBIDDEN_MESSAGE).toBe(
      'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    );
  });

  it('forbids adding containers, removing tolerations, raising the deadline, and renaming', () => {
    const old = pod((p) => {
      p.spec.tolerations = [{ key: 'a', operator: 'Exists' }];
      p.spec.activeDeadlineSeconds = 30;
    });
    const added = structuredClone(old);
    added.spec.containers.push({ name: 'side', image: 'busybox', terminationMessagePolicy: 'File', imagePullPolicy: 'Always' });
    expect(messages(added, old)).toEqual(['spec.containers: Forbidden: pod updates may not add or remove containers']);

    const removed = structuredClone(old);
    removed.spec.tolerations = [];
    expect(messages(removed, old)).toEqual(['spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds']);

    const raised = structuredClone(old);
    raised.spec.activeDeadlineSeconds = 60;
    expect(messages(raised, old)).toEqual(['spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value']);

    const renamed = structuredClone(old);
    renamed.metadata.name = 'other';
    expect(messages(renamed, old)).toEqual(['metadata.name: Invalid value: "other": field is immutable']);
  });

  it('rejects new finalizers on an object being deleted', () => {
    const old = pod((p) => (p.metadata.deletionTimestamp = '2024-01-01T00:00:00Z'));
    const next = structuredClone(old);
    next.metadata.finalizers = ['example.com/hold'];
    expect(messages(next, old)).toEqual([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/hold"}',
    ]);
  });
});
