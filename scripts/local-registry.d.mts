export interface LocalRegistry {
  /** http://127.0.0.1:PORT/ */
  url: string;
  /** An npmrc naming the registry, with a token that may publish. */
  npmrc: string;
  /** Storage, config and npmrc. */
  dir: string;
  log(): string;
  /** Stops verdaccio; removes the temp dir it made unless `keep`. */
  stop(options?: { keep?: boolean }): Promise<void>;
}
export function startLocalRegistry(options?: { port?: number; dir?: string; upstream?: string }): Promise<LocalRegistry>;
export function registryEnv(registry: LocalRegistry, extra?: Record<string, string>): NodeJS.ProcessEnv;
export function publishDir(registry: LocalRegistry, dir: string, options?: { prebuilt?: boolean }): Promise<'published' | 'exists'>;
/** Publishes every non-private workspace package; returns their name@version. */
export function publishWorkspace(registry: LocalRegistry, options?: { prebuilt?: boolean; log?: (line: string) => void }): Promise<string[]>;
