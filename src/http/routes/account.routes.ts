import type { Container } from '../../container.ts';
import { Account, LedgerPage, LedgerQuery } from '../schemas/account.schemas.ts';
import { PresetList } from '../schemas/presets.schemas.ts';
import { problems, type RouteApp } from './route-kit.ts';
import { ALL_PRESETS } from '../../presets/presets.ts';
import { HEAVY_MODEL_HEADER } from '../openapi.ts';

export function registerAccountRoutes(app: RouteApp, c: Pick<Container, 'accounts'>): void {
  app.get(
    '/v1/account',
    {
      schema: {
        operationId: 'getAccount',
        summary: 'Credits, licence, limits and which key (or session) is speaking',
        description:
          'The answer carries `X-Matte-Heavy-Model`: `stronger` when this server runs a heavy model of its own, `none` when a heavy re-run (2 credits) runs the light model again and gives the same cut-out. Read it before buying a heavy re-run.',
        tags: ['account'],
        response: { 200: Account, ...problems() },
      },
    },
    async (request, reply) => {
      const account = await c.accounts.describe(request.auth);
      return reply.header(HEAVY_MODEL_HEADER, c.accounts.heavyModel).send(account);
    },
  );

  app.get(
    '/v1/presets',
    {
      schema: {
        operationId: 'listPresets',
        summary: 'Marketplace presets (canvas, fill, background, format, upload limit)',
        description:
          'Every preset a batch or a photo can use: its canvas, how much of it the product fills, the background, the format and, for marketplaces, the upload limit their rules set.',
        tags: ['reference'],
        response: { 200: PresetList, ...problems() },
      },
    },
    async () => ({ presets: ALL_PRESETS }),
  );

  app.get(
    '/v1/credits/ledger',
    {
      schema: {
        operationId: 'listLedger',
        summary: 'Every credit movement, newest first',
        description:
          'Ledger times have microseconds and are unique per account, so `before=<nextBefore>` continues exactly where the page ended: no row twice, none skipped, however many rows were written in one millisecond. ' +
          '`before` takes any ISO 8601 date-time with a timezone (digits past the microsecond are ignored).',
        tags: ['account'],
        querystring: LedgerQuery,
        response: { 200: LedgerPage, ...problems(400) },
      },
    },
    async (request) => {
      const q = request.query;
      return c.accounts.ledgerPage(request.auth.accountId, { limit: q.limit ?? 50, before: q.before, jobId: q.jobId });
    },
  );
}
