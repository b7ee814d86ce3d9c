// Per-key limits (60 requests a minute, 2,000 photos an hour) that hold across every API process.
//
// Where the counts live: in the database every process already shares (PostgreSQL in a scaled-out
// deployment, the SQLite file on one host), one row per subject (an API key, a studio session, a
// sign-in address), changed under a row lock in a short transaction. Redis would answer faster, but it
// would be a second stateful service to run and back up for a self-hosted product whose load is a few
// requests a second per key; one small locked update per request is well within PostgreSQL's budget.
//
// How a window is counted: a sliding window kept as buckets (1 s for requests, 1 min for photos). A
// request counts from the second it arrived in until one full window after that second ends, so no
// 60-second span ever holds more than 60 counted requests and a burst cannot be doubled across a
// window boundary, as it can with fixed windows. Refused requests (429) are not counted.
import { AppError } from '../errors.ts';
import type { Repos, Store } from '../db/store.ts';
import type { RateLog, RateWindows } from '../db/json-columns.ts';

export interface WindowRule {
  name: string;
  limit: number;
  windowMs: number;
  bucketMs: number;
}

export interface WindowStatus {
  limit: number;
  remaining: number;
  /** Seconds until the oldest counted use leaves the window (0 when nothing is counted). */
  resetSeconds: number;
}

export interface RateLimits {
  requests: WindowRule;
  photos: WindowRule;
  signIn: WindowRule;
}

export function rateLimitRules(requestsPerMinute: number, photosPerHour: number): RateLimits {
  return {
    requests: { name: 'requests', limit: requestsPerMinute, windowMs: 60_000, bucketMs: 1000 },
    photos: { name: 'photos', limit: photosPerHour, windowMs: 3_600_000, bucketMs: 60_000 },
    // Password guessing: ten tries per address in 15 minutes.
    signIn: { name: 'sign-in', limit: 10, windowMs: 15 * 60_000, bucketMs: 60_000 },
  };
}

const expiresAt = (rule: WindowRule, bucketStart: number) => bucketStart + rule.bucketMs + rule.windowMs;

function live(log: RateLog | undefined, rule: WindowRule, now: number): RateLog {
  return (log ?? []).filter(([start]) => expiresAt(rule, start) > now);
}

function used(log: RateLog): number {
  return log.reduce((sum, [, n]) => sum + n, 0);
}

function statusOf(log: RateLog, rule: WindowRule, now: number): WindowStatus {
  const oldest = log[0];
  return {
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - used(log)),
    resetSeconds: oldest ? Math.max(1, Math.ceil((expiresAt(rule, oldest[0]) - now) / 1000)) : 0,
  };
}

/** Seconds until `n` more fit in the window. */
function secondsUntilRoom(log: RateLog, rule: WindowRule, n: number, now: number): number {
  let count = used(log);
  for (const [start, k] of log) {
    if (count + n <= rule.limit) break;
    count -= k;
    if (count + n <= rule.limit) return Math.max(1, Math.ceil((expiresAt(rule, start) - now) / 1000));
  }
  return 1;
}

function record(log: RateLog, rule: WindowRule, n: number, now: number): RateLog {
  const bucket = now - (now % rule.bucketMs);
  const last = log[log.length - 1];
  if (last && last[0] === bucket) return [...log.slice(0, -1), [bucket, last[1] + n]];
  return [...log, [bucket, n]];
}

/**
 * Takes up to `n` (or, not partial, all `n` or nothing) from one window of `windows`: the arithmetic of every
 * counter, whether its row is locked or compared and set. `windows` is left as it is; the answer's `windows`
 * records what was taken.
 */
function takeFrom(
  windows: RateWindows = {},
  rule: WindowRule,
  n: number,
  partial: boolean,
  now: number,
): { granted: number; retryAfter: number; windows: RateWindows } {
  const log = live(windows[rule.name], rule, now);
  const room = Math.max(0, rule.limit - used(log));
  const granted = partial ? Math.min(n, room) : n <= room ? n : 0;
  const retryAfter = granted < n ? secondsUntilRoom(log, rule, n - granted, now) : 0;
  return {
    granted,
    retryAfter,
    windows: granted > 0 ? { ...windows, [rule.name]: record(log, rule, granted, now) } : windows,
  };
}

type RequestOutcome = { refused: number; requests: WindowStatus; photos: WindowStatus };

export interface HitResult {
  requests: WindowStatus;
  photos: WindowStatus;
}

/** Subjects whose last written windows this process remembers (a hint; see countRequest). */
const HINTS_KEPT = 10_000;

export class RateLimitService {
  /**
   * The windows this process last wrote for a subject, as written: the compare-and-set's expected value, so a
   * request usually costs one statement. Only a hint: the database decides (a stale hint loses the
   * compare-and-set, and the request reads the row and tries again), so other processes stay exact.
   */
  private readonly written = new Map<string, RateWindows>();

  constructor(private readonly deps: { store: Store; clock: () => number; rules: RateLimits }) {}

  get rules(): RateLimits {
    return this.deps.rules;
  }

  /**
   * Counts one request for `subject`. Over the limit: RATE_LIMITED with `retryAfter` (nothing counted).
   * Returns the request and photo windows for the rate-limit headers of the answer.
   */
  async hit(subject: string): Promise<HitResult> {
    const { requests } = this.deps.rules;
    const outcome = await this.countRequest(subject);
    if (outcome.refused) {
      throw new RateLimitedError(
        `More than ${requests.limit} requests a minute with this key; retry in ${outcome.refused} s.`,
        outcome.refused,
        outcome,
      );
    }
    return { requests: outcome.requests, photos: outcome.photos };
  }

  /**
   * One request counted with a compare-and-set instead of a row lock, and no transaction: the windows are
   * read (or taken from what this process last wrote), counted, and written back only if the row still
   * holds what was read. One statement while this process's hint is current, two otherwise; a request that
   * lost a race reads again. A refusal is only ever given on windows read from the database.
   */
  private async countRequest(subject: string): Promise<RequestOutcome> {
    const { requests } = this.deps.rules;
    const repo = this.deps.store.repos.rateLimits;
    for (let attempt = 1; ; attempt++) {
      const now = this.deps.clock();
      // Many requests of one key at once: after a few lost races, wait in line under the row lock instead.
      if (attempt > 5) {
        this.written.delete(subject);
        return this.deps.store.transaction(async (r) =>
          this.requestOutcome(await this.take(r, subject, requests, 1, { partial: false }, now), now),
        );
      }
      const hint = this.written.get(subject);
      this.written.delete(subject);
      const before = hint ?? (await repo.read(subject));
      const taken = takeFrom(before, requests, 1, false, now);
      if (!taken.granted && hint !== undefined) continue;
      if (taken.granted) {
        if (!(await repo.replaceIf(subject, before, taken.windows, now))) continue;
        this.remember(subject, taken.windows);
      }
      return this.requestOutcome(taken, now);
    }
  }

  private remember(subject: string, windows: RateWindows): void {
    if (this.written.size >= HINTS_KEPT) this.written.clear();
    this.written.set(subject, windows);
  }

  /** What a counted (or refused) request answers with: its refusal's wait, and both windows for the headers. */
  private requestOutcome(
    taken: { granted: number; retryAfter: number; windows: RateWindows },
    now: number,
  ): RequestOutcome {
    const status = (rule: WindowRule) => statusOf(live(taken.windows[rule.name], rule, now), rule, now);
    const { requests, photos } = this.deps.rules;
    return { refused: taken.granted ? 0 : taken.retryAfter, requests: status(requests), photos: status(photos) };
  }

  /** The photo budget without using any: intake refuses at once when nothing is left. */
  async photoStatus(subject: string): Promise<WindowStatus & { retryAfter: number }> {
    const { photos } = this.deps.rules;
    const now = this.deps.clock();
    const windows = await this.deps.store.repos.rateLimits.read(subject);
    const log = live(windows?.[photos.name], photos, now);
    return { ...statusOf(log, photos, now), retryAfter: secondsUntilRoom(log, photos, 1, now) };
  }

  /** Refuses with RATE_LIMITED when the hourly photo budget is spent. */
  async requirePhotoBudget(subject: string): Promise<number> {
    const status = await this.photoStatus(subject);
    if (status.remaining > 0) return status.remaining;
    throw new AppError(
      'RATE_LIMITED',
      `This key added ${status.limit} photos in the last hour, its hourly budget; retry in ${status.retryAfter} s.`,
      { retryAfter: status.retryAfter },
    );
  }

  /**
   * Takes up to `n` photos from the hourly budget inside the caller's transaction (the one that adds
   * the photos), so two uploads at once can never both spend the last photos. Returns how many fit.
   */
  async takePhotos(r: Repos, subject: string, n: number): Promise<{ granted: number; retryAfter: number }> {
    const { granted, retryAfter } = await this.take(r, subject, this.deps.rules.photos, n, { partial: true });
    return { granted, retryAfter };
  }

  /** One sign-in attempt for an address; RATE_LIMITED past ten in 15 minutes. */
  async signInAttempt(email: string): Promise<void> {
    const rule = this.deps.rules.signIn;
    const { granted, retryAfter } = await this.deps.store.transaction((r) =>
      this.take(r, `sign-in:${email}`, rule, 1, { partial: false }),
    );
    if (!granted)
      throw new AppError('RATE_LIMITED', `Too many sign-in attempts for this address; retry in ${retryAfter} s.`, {
        retryAfter,
      });
  }

  /** Takes up to `n` (or, not partial, all `n` or nothing) from one window of `subject`; returns the windows as they now are. */
  private async take(
    r: Repos,
    subject: string,
    rule: WindowRule,
    n: number,
    opts: { partial: boolean },
    now = this.deps.clock(),
  ): Promise<{ granted: number; retryAfter: number; windows: RateWindows }> {
    const taken = takeFrom(await r.rateLimits.lock(subject, now), rule, n, opts.partial, now);
    if (taken.granted > 0) await r.rateLimits.save(subject, taken.windows, now);
    return taken;
  }

  /** Forgets subjects idle for longer than the longest window. */
  async sweep(): Promise<void> {
    const longest = Math.max(...Object.values(this.deps.rules).map((rule) => rule.windowMs + rule.bucketMs));
    await this.deps.store.repos.rateLimits.deleteIdleSince(this.deps.clock() - longest);
  }
}

/** RATE_LIMITED carrying the windows, so the answer still has its rate-limit headers. */
export class RateLimitedError extends AppError {
  constructor(
    detail: string,
    retryAfter: number,
    readonly windows: HitResult,
  ) {
    super('RATE_LIMITED', detail, { retryAfter });
  }
}
