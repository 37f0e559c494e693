/** A TCP port free on 127.0.0.1 at the moment of asking (the kernel's pick). */
export function freePort(): Promise<number>;
