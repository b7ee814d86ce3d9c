// Buying credit packs. A purchase is created pending through a PaymentProvider and completes exactly
// once: completion (an operator's approval, or later a card processor's confirmed payment) is the one
// path that writes the `purchase` ledger row, so adding a provider never touches the ledger.
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Store } from '../db/store.ts';
import type { PurchaseRow } from '../db/schema.ts';
import type { CreditsService } from './credits.service.ts';
import type { PaymentProvider } from '../adapters/payments/payment-provider.ts';
import type { PurchaseStatus } from '../domain/account-states.ts';

export const CREDIT_PACKS = [
  { id: 'pack-100', credits: 100 },
  { id: 'pack-500', credits: 500 },
  { id: 'pack-2000', credits: 2000 },
  { id: 'pack-10000', credits: 10000 },
] as const;

export interface PurchaseView {
  id: string;
  packId: string;
  credits: number;
  status: 'pending' | 'completed' | 'cancelled';
  provider: string;
  instructions: string | null;
  createdAt: string;
  completedAt: string | null;
}

export function purchaseView(
  row: PurchaseRow,
  instructions: string | null = null,
): PurchaseView & { accountId: string } {
  return {
    id: row.id,
    accountId: row.account_id,
    packId: row.pack_id,
    credits: row.credits,
    status: row.status,
    provider: row.provider,
    instructions,
    createdAt: new Date(row.created_at).toISOString(),
    completedAt: row.completed_at === null ? null : new Date(row.completed_at).toISOString(),
  };
}

export class PurchaseService {
  constructor(
    private readonly deps: { store: Store; credits: CreditsService; clock: () => number; provider: PaymentProvider },
  ) {}

  async buy(accountId: string, packId: string) {
    const pack = CREDIT_PACKS.find((p) => p.id === packId);
    if (!pack)
      throw new AppError(
        'VALIDATION',
        `No credit pack "${packId}"; packs: ${CREDIT_PACKS.map((p) => p.id).join(', ')}.`,
        { errors: [{ path: 'body/packId', message: 'unknown pack' }] },
      );
    const row: PurchaseRow = {
      id: newId('pur'),
      account_id: accountId,
      pack_id: pack.id,
      credits: pack.credits,
      provider: this.deps.provider.name,
      provider_ref: null,
      status: 'pending',
      created_at: this.deps.clock(),
      completed_at: null,
    };
    await this.deps.store.repos.purchases.insert(row);
    const started = await this.deps.provider.begin({ id: row.id, accountId, packId: pack.id, credits: pack.credits });
    if (started.reference)
      await this.deps.store.repos.purchases.transition(row.id, 'pending', { provider_ref: started.reference });
    if (started.state === 'paid') return purchaseView(await this.complete(row.id), started.instructions);
    return purchaseView({ ...row, provider_ref: started.reference }, started.instructions);
  }

  async list(opts: { accountId?: string; status?: PurchaseStatus; limit?: number }) {
    return (await this.deps.store.repos.purchases.list({ ...opts, limit: opts.limit ?? 100 })).map((row) =>
      purchaseView(row),
    );
  }

  /** Credits a pending purchase to the pack pool, once: a second call finds it completed and refuses. */
  async complete(purchaseId: string): Promise<PurchaseRow> {
    const now = this.deps.clock();
    return this.deps.store.transaction(async (r) => {
      const purchase = await r.purchases.findById(purchaseId);
      if (!purchase) throw new AppError('NOT_FOUND', `No purchase ${purchaseId}.`);
      if (!(await r.purchases.transition(purchaseId, 'pending', { status: 'completed', completed_at: now }))) {
        throw new AppError('CONFLICT', `Purchase ${purchaseId} is ${purchase.status}, not pending.`, {
          reason: 'NOT_PENDING',
        });
      }
      await this.deps.credits.grant(
        r,
        purchase.account_id,
        'pack',
        purchase.credits,
        'purchase',
        `credit pack ${purchase.pack_id} (purchase ${purchase.id})`,
        now,
      );
      return { ...purchase, status: 'completed', completed_at: now };
    });
  }

  async cancel(purchaseId: string): Promise<PurchaseRow> {
    const purchase = await this.deps.store.repos.purchases.findById(purchaseId);
    if (!purchase) throw new AppError('NOT_FOUND', `No purchase ${purchaseId}.`);
    if (!(await this.deps.store.repos.purchases.transition(purchaseId, 'pending', { status: 'cancelled' })))
      throw new AppError('CONFLICT', `Purchase ${purchaseId} is ${purchase.status}, not pending.`, {
        reason: 'NOT_PENDING',
      });
    return { ...purchase, status: 'cancelled' };
  }
}
