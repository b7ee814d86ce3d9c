// The caller's hourly photo budget for intake: refused at once (429) when spent, otherwise handed to
// the batch service, which spends it in the transaction that adds the photos.
import type { FastifyRequest } from 'fastify';
import type { Container } from '../container.ts';
import type { AddPhotosOptions } from '../services/intake.service.ts';
import { rateLimitSubject } from './plugins/auth.plugin.ts';

export async function intakeLimits(
  c: Pick<Container, 'limits' | 'accounts'>,
  request: FastifyRequest,
): Promise<AddPhotosOptions> {
  const subject = rateLimitSubject(request.auth);
  const remaining = await c.limits.requirePhotoBudget(subject);
  return {
    maxPhotos: await c.accounts.photosPerBatch(request.auth.accountId),
    budget: { limit: c.limits.rules.photos.limit, remaining, take: (r, n) => c.limits.takePhotos(r, subject, n) },
  };
}
