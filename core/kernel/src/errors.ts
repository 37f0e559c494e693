import { codedError } from './coded-error.js';

/** Every kernel error: a stable code and a message template. Users see `message`, never a stack. */
export const KERNEL_ERRORS = Object.freeze({
  SKIFF_ERR_KERNEL_CONFIG_INVALID: 'invalid config {file}: {detail}',
  SKIFF_ERR_KERNEL_CONFIG_NOT_FOUND: 'config file not found: {file}',
  SKIFF_ERR_KERNEL_PRESET_NOT_FOUND: 'preset "{name}" not found (looked for {candidates} from {from})',
  SKIFF_ERR_KERNEL_PRESET_INVALID: 'preset "{name}" is invalid: {detail}',
  SKIFF_ERR_KERNEL_PRESET_CYCLE: 'presets extend each other in a cycle: {cycle}',
  SKIFF_ERR_KERNEL_PLUGIN_NOT_FOUND: 'plugin "{name}" not found (is it installed? looked from {from})',
  SKIFF_ERR_KERNEL_PLUGIN_LOAD: 'plugin "{name}" failed to load: {detail}',
  SKIFF_ERR_KERNEL_PLUGIN_INVALID: 'plugin "{name}" is invalid: {detail}',
  SKIFF_ERR_KERNEL_PLUGIN_DUPLICATE: 'plugin "{name}" is loaded twice',
  SKIFF_ERR_KERNEL_PLUGIN_DEPENDENCY: 'plugin "{name}" needs plugin "{dependency}", which is not loaded',
  SKIFF_ERR_KERNEL_PLUGIN_KERNEL_RANGE: 'plugin "{name}" supports kernel {range}, but this kernel is {version}',
  SKIFF_ERR_KERNEL_PLUGIN_OPTIONS: 'plugin "{name}": {detail}',
  SKIFF_ERR_KERNEL_PLUGIN_APPLY: 'plugin "{name}" failed in apply: {detail}',
  SKIFF_ERR_KERNEL_PLUGIN_FAILED: 'plugin "{name}" failed in {hook}{tap}: {detail}',
  SKIFF_ERR_KERNEL_PACKAGE_INVALID: 'cannot read plugin metadata from {file}: {detail}',
  SKIFF_ERR_KERNEL_COMPONENT: 'component "{name}" failed to start: {detail}',
  SKIFF_ERR_KERNEL_COMPONENT_MISSING: 'no component "{name}" is registered ({detail})',
  SKIFF_ERR_KERNEL_COMPONENT_EXISTS: 'component "{name}" is already registered; pass { replace: true } to replace it on purpose',
  SKIFF_ERR_KERNEL_COMPONENT_TWICE: 'plugins "{first}" and "{second}" both provide component "{name}"; remove one of them',
  SKIFF_ERR_KERNEL_COMPONENT_NEEDED: 'plugin "{name}" needs component "{component}", which no loaded plugin provides',
  SKIFF_ERR_KERNEL_COMPONENT_NOT_PROVIDED: 'plugin "{name}" says it provides component "{component}" but did not register it',
  SKIFF_ERR_KERNEL_COMPONENT_UNDECLARED:
    'plugin "{name}" resolves component "{component}" without declaring it; add it to the plugin\'s needs (or wants, if it copes without it)',
} as const);

export type KernelErrorCode = keyof typeof KERNEL_ERRORS;

export class KernelError extends codedError('KernelError', KERNEL_ERRORS) {}
