// Monthly renewals on the licence's own date: activated on the 31st, it renews on the last day of
// shorter months and on the 31st again where there is one (UTC, at the activation's time of day).

const DAY_MS = 86_400_000;

/** `anchor` moved by `months` calendar months, the day clamped to the target month's length. */
function addMonthsUtc(anchor: number, months: number): number {
  const d = new Date(anchor);
  const target = new Date(
    Date.UTC(
      d.getUTCFullYear(),
      d.getUTCMonth() + months,
      1,
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
      d.getUTCMilliseconds(),
    ),
  );
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime();
}

/** The first monthly renewal of a licence activated at `activatedAt` that falls after `after`. */
export function nextMonthlyRefresh(activatedAt: number, after: number): number {
  // Months elapsed, estimated from the average month and corrected by at most a step either way.
  let k = Math.max(1, Math.floor((after - activatedAt) / (30.436875 * DAY_MS)));
  while (k > 1 && addMonthsUtc(activatedAt, k - 1) > after) k--;
  while (addMonthsUtc(activatedAt, k) <= after) k++;
  return addMonthsUtc(activatedAt, k);
}

/** Whole days from `now` until `at`, rounded up (0 when due). */
export function daysUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / DAY_MS));
}
