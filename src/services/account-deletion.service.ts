// Deleting an account (studio only, password confirmed): every key revoked and every session ended,
// open reservations released to the ledger, every batch with its photos and files removed. The account
// row and its ledger stay, anonymised, as the record of what was bought and spent.
import { AppError } from '../errors.ts';
import type { Store } from '../db/store.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { CreditsService } from './credits.service.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import { verifyPassword } from './password.ts';
import { blobKeys } from './blob-keys.ts';

export class AccountDeletionService {
  constructor(
    private readonly deps: {
      store: Store;
      credits: CreditsService;
      blobs: BlobStore;
      bus: EventBus;
      clock: () => number;
    },
  ) {}

  async deleteAccount(accountId: string, password: string): Promise<void> {
    const { store, credits, clock } = this.deps;
    const account = await store.repos.accounts.findById(accountId);
    if (!account || account.deleted_at !== null) throw new AppError('NOT_FOUND', 'No such account.');
    if (!(await verifyPassword(password, account.password_hash)))
      throw new AppError('INVALID_CREDENTIALS', 'The password is wrong; the account was not deleted.');
    const now = clock();
    const jobIds = await store.transaction(async (r) => {
      await r.accounts.findForUpdate(accountId);
      await r.accounts.revokeAllKeys(accountId, now);
      await r.sessions.deleteForAccount(accountId);
      const ids = await r.jobs.listIdsForAccount(accountId);
      for (const jobId of ids) {
        for (const item of await r.items.listForJob(jobId)) {
          if (item.status !== 'done') await credits.release(r, item, now, 'account deleted');
        }
        await r.jobs.delete(jobId);
      }
      if (account.license_id) await r.licenses.update(account.license_id, { status: 'deactivated' }, 'active');
      await r.accounts.update(accountId, {
        deleted_at: now,
        email: `deleted+${accountId}@deleted.invalid`,
        password_hash: null,
      });
      return ids;
    });
    for (const jobId of jobIds) {
      await this.deps.blobs.deletePrefix(blobKeys.job(jobId));
      this.deps.bus.jobChanged(jobId);
    }
  }
}
