import type { ContainerRuntime, ImageAuth } from '@skiff/kernel';

export interface PullAttempt {
  image: string;
  /** The credentials the kubelet passed (undefined: an anonymous pull). */
  auth?: ImageAuth;
}

export interface PrivateRegistryRuntime<T extends ContainerRuntime> {
  runtime: T;
  /** Every pullImage call, in order. */
  pulls: PullAttempt[];
}

/**
 * The runtime, with images under `registry` (HOST[:PORT]) private: pulling one needs `login`'s username and
 * password and fails as a registry's 401 otherwise. Every pull and the auth it carried is recorded.
 */
export function privateRegistry<T extends ContainerRuntime>(
  runtime: T,
  registry: string,
  login: { username: string; password: string },
): PrivateRegistryRuntime<T> {
  const pulls: PullAttempt[] = [];
  const recorded = new Proxy(runtime, {
    get(target, property) {
      if (property === 'pullImage')
        return async (image: string, auth?: ImageAuth) => {
          pulls.push(auth ? { image, auth: structuredClone(auth) } : { image });
          const isPrivate = image.startsWith(`${registry}/`);
          if (isPrivate && (auth?.username !== login.username || auth?.password !== login.password))
            throw new Error(`failed to resolve reference "${image}": pulling from host ${registry} failed with status code [manifests 1]: 401 Unauthorized`);
          return target.pullImage(image, auth);
        };
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { runtime: recorded, pulls };
}
