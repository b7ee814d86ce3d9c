import type { Repos } from '../db/store.ts';

/**
 * Every transaction that moves credits or counts running batches takes the account's row lock first
 * (PostgreSQL; SQLite's write lock covers it). Two starts at once then run one after the other: the
 * second sees the first's batch as started (NOT_DRAFT), counted among the running ones
 * (TOO_MANY_ACTIVE) and its credits gone (NO_CREDITS). One lock order, account first, also rules
 * out deadlocks with the worker's settlements.
 */
export async function lockAccount(r: Repos, accountId: string): Promise<void> {
  await r.accounts.findForUpdate(accountId);
}
