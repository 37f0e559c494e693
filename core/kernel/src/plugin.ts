import type { Kernel } from './kernel.js';
import type { OptionsOf, OptionsSchema } from './options.js';
import type { ComponentName } from './components.js';

/**
 * A Skiff plugin: the default export of a plugin package. `apply` only registers taps and components;
 * the work happens inside the taps.
 */
export interface SkiffPlugin<Options = Record<string, unknown>> {
  /** The npm package name, e.g. "@skiff/plugin-authz-rbac" or "skiff-plugin-deny-label". */
  name: string;
  version: string;
  /** The kernel versions this plugin supports, as a semver range: "^0.1.0". */
  kernel: string;
  /** Plugins that must be loaded too (by name). */
  dependencies?: string[];
  /** Shared components this plugin registers with `kernel.provide` (checked once the cluster started). */
  provides?: ComponentName[];
  /** Shared components this plugin resolves; start fails at once, naming it, when no loaded plugin provides one. */
  needs?: ComponentName[];
  /** Shared components this plugin resolves only when some plugin provides them (it asks `kernel.hasComponent` first). */
  wants?: ComponentName[];
  /** Checked when the plugin loads; defaults are filled in before `apply` sees the options. */
  options?: OptionsSchema;
  /**
   * Registers the plugin's taps and components. The kernel it is handed resolves only the components the plugin
   * declared (`needs`, `wants`, `provides`) and the kernel's own (`kernel`, `config`, `logger`); any other name is
   * SKIFF_ERR_KERNEL_COMPONENT_UNDECLARED.
   */
  apply(kernel: Kernel, options: Options): void;
}

/** A plugin as its author writes it: the options schema, from which `apply`'s options are typed. */
export type PluginDefinition<S extends OptionsSchema | undefined> = Omit<SkiffPlugin<OptionsOf<S>>, 'options' | 'apply'> & {
  options?: S;
  apply(kernel: Kernel, options: S extends OptionsSchema ? OptionsOf<S> : Record<string, never>): void;
};

/**
 * Declares a plugin. The options schema is written once: `apply` receives options typed from it
 * (see OptionsOf), checked and with defaults filled in. Export `OptionsOf<typeof plugin.options>` or
 * `PluginOptions<typeof plugin>` where others need the type.
 */
export function definePlugin<const S extends OptionsSchema | undefined = undefined>(
  plugin: PluginDefinition<S>,
): SkiffPlugin<NoInfer<S> extends OptionsSchema ? OptionsOf<NoInfer<S>> : Record<string, never>> & { options: NoInfer<S> } {
  return plugin as never;
}

/** The options type of a plugin made with definePlugin. */
export type PluginOptions<P> = P extends SkiffPlugin<infer O> ? O : never;

/** How a config or preset names a plugin: by package name, with options, or `false` to remove it. */
export type PluginSpec = string | SkiffPlugin<any> | [string | SkiffPlugin<any>, (Record<string, unknown> | false)?];

export interface SkiffPreset {
  name: string;
  /** Presets this one builds on; their plugins come first. */
  extends?: string[];
  plugins: PluginSpec[];
  /** Config defaults this preset sets (the user's config overrides them). */
  config?: Record<string, unknown>;
}

export function definePreset(preset: SkiffPreset): SkiffPreset {
  return preset;
}
