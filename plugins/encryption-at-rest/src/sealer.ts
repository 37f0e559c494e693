import type { ValueSealer } from '@skiff/store';
import type { EncryptionRule } from './config.js';
import { IdentityProvider, startsWith } from './providers.js';

/** Seals store values by the first rule whose prefix matches the key, with that rule's first provider. */
export class RuleSealer implements ValueSealer {
  constructor(private readonly rules: EncryptionRule[]) {}

  seals(key: string): boolean {
    const rule = this.ruleFor(key);
    return rule !== undefined && !(rule.providers[0] instanceof IdentityProvider);
  }

  seal(key: string, plaintext: Uint8Array): Uint8Array {
    return this.ruleFor(key)!.providers[0]!.seal(plaintext, Buffer.from(key));
  }

  /** Any configured provider whose prefix the value carries may open it: a key moved between entries still reads. */
  open(key: string, sealed: Uint8Array): Uint8Array {
    const candidates = [...(this.ruleFor(key)?.providers ?? []), ...this.rules.flatMap((rule) => rule.providers)];
    const provider = candidates.find((candidate) => startsWith(sealed, candidate.prefix));
    if (!provider) {
      const head = Buffer.from(sealed.buffer, sealed.byteOffset, Math.min(sealed.byteLength, 64)).toString('latin1');
      const name = /^k8s:enc:[a-z]+:v1:[^:]+:/.exec(head)?.[0] ?? 'an unknown key';
      throw new Error(`it was sealed with ${name} and no configured provider has that key`);
    }
    return provider.open(sealed, Buffer.from(key));
  }

  isCurrent(key: string, sealed: Uint8Array): boolean {
    const first = this.ruleFor(key)?.providers[0];
    return first !== undefined && startsWith(sealed, first.prefix);
  }

  private ruleFor(key: string): EncryptionRule | undefined {
    return this.rules.find((rule) => key.startsWith(rule.prefix));
  }
}
