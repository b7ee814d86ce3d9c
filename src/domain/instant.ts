// Ledger times are ISO 8601 strings with microseconds. Each account's ledger rows carry unique,
// increasing microsecond stamps, so a row's `createdAt` is an exact cursor: `before=<createdAt>`
// returns precisely the rows older than it.

/** 1732000000123456 → "2024-11-19T07:06:40.123456Z" */
export function formatMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, -1)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}

const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/i;

/** An ISO 8601 date-time with a timezone and up to nanoseconds → microseconds; undefined when malformed. */
export function parseMicros(text: string): number | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const zone = m[3].length === 5 ? `${m[3].slice(0, 3)}:${m[3].slice(3)}` : m[3];
  const seconds = Date.parse(`${m[1]}${zone.toUpperCase()}`);
  if (Number.isNaN(seconds)) return undefined;
  // Digits past the microsecond are dropped: a cursor with nanoseconds still lands on the right row.
  const fraction = Number((m[2] ?? '').padEnd(6, '0').slice(0, 6));
  return seconds * 1000 + fraction;
}
