import { X509Certificate } from 'node:crypto';
import type { Logger } from '@skiff/kernel';

/** A part of a certificate's life, as fractions from its start. */
export interface RotationWindow {
  from: number;
  to: number;
}

/** When in a certificate's life it is renewed: between 70 % and 90 %, jittered as upstream's kubelet does. */
export const ROTATION_WINDOW: Readonly<RotationWindow> = Object.freeze({ from: 0.7, to: 0.9 });
const RETRY_MS = 30_000;

/** The moment to renew a certificate (PEM): a point of its validity within the window, `jitter` in [0, 1). */
export function renewalTime(certPem: string, jitter = Math.random(), window: RotationWindow = ROTATION_WINDOW): number {
  const certificate = new X509Certificate(certPem);
  const from = Date.parse(certificate.validFrom);
  const to = Date.parse(certificate.validTo);
  return from + (to - from) * (window.from + (window.to - window.from) * jitter);
}

/**
 * Renews a certificate before it expires, again and again: at its renewal time `renew` gets a new one (a CSR to the
 * cluster) and hands it over; a failed renewal is tried again every 30 s until it works or the kubelet stops.
 */
export class CertificateRotation {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly what: string,
    private readonly renew: () => Promise<string>,
    private readonly logger: Logger,
    private readonly window: RotationWindow = ROTATION_WINDOW,
  ) {}

  /** Plans the renewal of `certPem`, the certificate in use now. */
  start(certPem: string): void {
    this.plan(Math.max(0, renewalTime(certPem, Math.random(), this.window) - Date.now()));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private plan(delayMs: number): void {
    if (this.stopped) return;
    // setTimeout fires at once past 2^31-1 ms (24.8 days): a year-long certificate is looked at again before then.
    const capped = Math.min(delayMs, 2 ** 31 - 1);
    this.timer = setTimeout(() => void (capped < delayMs ? this.plan(delayMs - capped) : this.rotate()), capped);
    this.timer.unref();
  }

  private async rotate(): Promise<void> {
    try {
      const certPem = await this.renew();
      this.logger.info({ certificate: this.what, expires: new X509Certificate(certPem).validTo }, 'certificate rotated');
      this.start(certPem);
    } catch (err) {
      if (this.stopped) return;
      this.logger.warn({ err, certificate: this.what }, 'certificate rotation failed; trying again in 30s');
      this.plan(RETRY_MS);
    }
  }
}
