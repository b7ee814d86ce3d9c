// Periodic account housekeeping, safe to run in every process at once: licences renewed on their date
// (even for accounts nobody reads), idle rate-limit rows, expired sessions and idempotency records
// dropped. Each step is idempotent and takes the same locks as the requests it tidies after.
import type { Logger } from 'pino';
import type { LicenseService } from '../services/license.service.ts';
import type { RateLimitService } from '../services/rate-limit.service.ts';
import type { Store } from '../db/store.ts';
import { IDEMPOTENCY_TTL_MS } from '../services/idempotency.service.ts';

export class AccountMaintenance {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly deps: {
      store: Store;
      licenses: LicenseService;
      limits: RateLimitService;
      clock: () => number;
      log: Logger;
      intervalMs?: number;
    },
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.deps.intervalMs ?? 60_000);
    this.timer.unref();
  }

  async runOnce(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        await this.deps.licenses.renewDue();
        await this.deps.limits.sweep();
        const now = this.deps.clock();
        await this.deps.store.repos.sessions.deleteExpired(now);
        await this.deps.store.repos.idempotency.deleteOlderThan(now - IDEMPOTENCY_TTL_MS);
      } catch (err) {
        this.deps.log.error({ err }, 'account maintenance failed');
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
