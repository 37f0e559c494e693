import { ControllerManagerError } from './errors.js';

/**
 * kube-controller-manager's `--controllers` semantics: `*` turns on every registered controller, `name`
 * turns one on, `-name` turns one off; an explicit entry beats `*`.
 */
export function isControllerEnabled(name: string, enabled: readonly string[]): boolean {
  if (enabled.includes(`-${name}`)) return false;
  return enabled.includes(name) || enabled.includes('*');
}

/** Rejects entries that name controllers nobody registered: a typo would otherwise silently disable nothing. */
export function checkEnabledNames(enabled: readonly string[], registered: readonly string[]): void {
  for (const entry of enabled) {
    if (entry === '*') continue;
    const name = entry.startsWith('-') ? entry.slice(1) : entry;
    if (!registered.includes(name)) throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_UNKNOWN', { name, known: registered.join(', ') || '(none)' });
  }
}
