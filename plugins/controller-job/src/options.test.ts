import { Kernel } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import plugin from './index.js';

describe('the job plugin options', () => {
  it('stops the start on a time zone the runtime does not know, naming the plugin and the option', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { defaultTimeZone: 'Mars/Olympus_Mons' })).toThrow(
      /@skiff\/plugin-controller-job.*option "defaultTimeZone": unknown time zone "Mars\/Olympus_Mons"/,
    );
  });

  it('takes a zone it knows', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { defaultTimeZone: 'Europe/Berlin' })).not.toThrow();
  });
});
