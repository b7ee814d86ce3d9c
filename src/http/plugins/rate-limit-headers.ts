// Rate-limit headers on every authenticated answer, so clients can pace themselves:
//   RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset   requests per minute for this key (IETF draft names)
//   X-Matte-Photos-Limit / -Remaining / -Reset                 the key's hourly photo budget
// Reset is in seconds until the oldest counted use leaves its window (0 when nothing is counted).
import type { FastifyReply } from 'fastify';
import type { HitResult } from '../../services/rate-limit.service.ts';

export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': 'Requests this key may make in any 60 seconds.',
  'RateLimit-Remaining': 'Requests left in the current 60-second window.',
  'RateLimit-Reset': 'Seconds until the oldest counted request leaves the window.',
  'X-Matte-Photos-Limit': 'Photos this key may add in any hour.',
  'X-Matte-Photos-Remaining': 'Photos left in the current hour.',
  'X-Matte-Photos-Reset': 'Seconds until the oldest counted photo leaves the hour.',
} as const;

export function setRateLimitHeaders(reply: FastifyReply, w: HitResult): void {
  reply.header('ratelimit-limit', w.requests.limit);
  reply.header('ratelimit-remaining', w.requests.remaining);
  reply.header('ratelimit-reset', w.requests.resetSeconds);
  reply.header('x-matte-photos-limit', w.photos.limit);
  reply.header('x-matte-photos-remaining', w.photos.remaining);
  reply.header('x-matte-photos-reset', w.photos.resetSeconds);
}
