import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';

/** One entry of an EncryptionConfiguration's `providers`: the first seals, every one may open. */
export interface Provider {
  /** Bytes every value this provider sealed starts with (`k8s:enc:aesgcm:v1:<key name>:`); empty for identity. */
  readonly prefix: Buffer;
  seal(plaintext: Uint8Array, additionalData: Uint8Array): Uint8Array;
  open(sealed: Uint8Array, additionalData: Uint8Array): Uint8Array;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-GCM with one named key, in the layout kube-apiserver's aesgcm provider writes: the prefix, a random 12-byte
 * nonce, the ciphertext and the 16-byte tag. The storage key is the authenticated data.
 */
export class AesGcmProvider implements Provider {
  readonly prefix: Buffer;
  private readonly algorithm: CipherGCMTypes;

  constructor(
    readonly keyName: string,
    private readonly key: Buffer,
  ) {
    this.prefix = Buffer.from(`k8s:enc:aesgcm:v1:${keyName}:`);
    this.algorithm = `aes-${key.length * 8}-gcm` as CipherGCMTypes;
  }

  seal(plaintext: Uint8Array, additionalData: Uint8Array): Uint8Array {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(this.algorithm, this.key, nonce);
    cipher.setAAD(additionalData);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([this.prefix, nonce, body, cipher.getAuthTag()]);
  }

  open(sealed: Uint8Array, additionalData: Uint8Array): Uint8Array {
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength).subarray(this.prefix.length);
    if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new Error(`the value is too short for AES-GCM with key "${this.keyName}"`);
    const decipher = createDecipheriv(this.algorithm, this.key, bytes.subarray(0, NONCE_BYTES));
    decipher.setAAD(additionalData);
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  }
}

/** No encryption: as the first provider, values are written in the clear (and sealed ones are opened and rewritten). */
export class IdentityProvider implements Provider {
  readonly prefix = Buffer.alloc(0);
  seal(plaintext: Uint8Array): Uint8Array {
    return plaintext;
  }
  open(sealed: Uint8Array): Uint8Array {
    return sealed;
  }
}

export function startsWith(bytes: Uint8Array, prefix: Buffer): boolean {
  return prefix.length > 0 && bytes.length >= prefix.length && prefix.equals(Buffer.from(bytes.buffer, bytes.byteOffset, prefix.length));
}
