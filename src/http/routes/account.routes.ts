import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { AppError } from '../../errors.ts';
import { Account, LedgerPage, LedgerQuery, PresetList, type LedgerQuery as LedgerQueryT } from '../schemas/requests.schemas.ts';
import { problems } from './route-kit.ts';
import { PRESETS } from '../../presets/presets.ts';

export function registerAccountRoutes(app: FastifyInstance, c: Container): void {
  app.get(
    '/v1/account',
    { schema: { summary: 'Credits, limits and which key is speaking', tags: ['account'], response: { 200: Account, ...problems() } } },
    async (request) => c.accounts.describe(request.auth),
  );

  app.get(
    '/v1/presets',
    { schema: { summary: 'Marketplace presets (canvas, fill, background, format, upload limit)', tags: ['reference'], response: { 200: PresetList, ...problems() } } },
    async () => ({ presets: PRESETS }),
  );

  app.get(
    '/v1/credits/ledger',
    {
      schema: {
        summary: 'Every credit movement, newest first',
        tags: ['account'],
        querystring: LedgerQuery,
        response: { 200: LedgerPage, ...problems(400) },
      },
    },
    async (request) => {
      const q = request.query as LedgerQueryT;
      const limit = q.limit ?? 50;
      let before: number | undefined;
      if (q.before !== undefined) {
        before = Date.parse(q.before);
        if (Number.isNaN(before) || !/(Z|[+-]\d\d:?\d\d)$/i.test(q.before)) {
          throw new AppError('VALIDATION', 'before must be an ISO 8601 date-time with a timezone.', { errors: [{ path: 'querystring/before', message: 'must be ISO 8601 with timezone' }] });
        }
      }
      const rows = await c.store.repos.ledger.list(request.auth.accountId, { limit: limit + 1, before });
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return {
        entries: page.map((r) => ({
          id: Number(r.id),
          jobId: r.job_id,
          itemId: r.item_id,
          kind: r.kind,
          pool: r.pool as 'plan' | 'pack',
          amount: r.amount,
          units: r.units,
          balanceAfter: r.balance_after,
          reason: r.reason,
          createdAt: new Date(r.created_at).toISOString(),
        })),
        hasMore,
        // Rows created in the same millisecond as the last one are on the next page only if they are older by id;
        // paging by time is what the spec gives, so rows sharing the boundary millisecond may repeat, never go missing.
        nextBefore: hasMore ? new Date(page[page.length - 1].created_at + 1).toISOString() : null,
      };
    },
  );
}
