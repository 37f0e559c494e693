import type { AdmissionRequest, Kernel } from '@skiff/kernel';
import type { KubeObject } from '@skiff/api';

/**
 * Builds an AdmissionRequest for calling a plugin's admission taps directly in a unit test, without a
 * cluster: `await kernel.hooks.validate.promise(admissionRequest({ object: pod }))`.
 */
export function admissionRequest(overrides: Partial<AdmissionRequest> & { objects?: KubeObject[] } = {}): AdmissionRequest {
  const { objects = [], ...rest } = overrides;
  const object = rest.object;
  return {
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: object?.kind ?? 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    subresource: '',
    namespace: object?.metadata.namespace ?? 'default',
    name: object?.metadata.name ?? '',
    user: { username: 'test-user', groups: ['system:authenticated'] },
    dryRun: false,
    get: async (_resource, namespace, name) => objects.find((o) => o.metadata.name === name && (o.metadata.namespace ?? '') === namespace),
    ...rest,
  };
}

/** Runs the mutating then validating admission chains of `kernel` for one request, as the API server does. */
export async function admit(kernel: Kernel, request: AdmissionRequest): Promise<KubeObject | undefined> {
  await kernel.hooks.mutate.promise(request);
  await kernel.hooks.validate.promise(request);
  return request.object;
}
