import type { Kernel } from './kernel.js';
import type { OptionsSchema } from './options.js';

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
  /** Checked when the plugin loads; defaults are filled in before `apply` sees the options. */
  options?: OptionsSchema;
  apply(kernel: Kernel, options: Options): void;
}

/** Identity function that gives plugin authors type checking and inference of their options. */
export function definePlugin<Options = Record<string, unknown>>(plugin: SkiffPlugin<Options>): SkiffPlugin<Options> {
  return plugin;
}

/** How a config or preset names a plugin: by package name, with options, or `false` to remove it. */
export type PluginSpec =
  | string
  | SkiffPlugin<any>
  | [string | SkiffPlugin<any>, (Record<string, unknown> | false)?];

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
