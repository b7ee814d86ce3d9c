// The account and credit services, built one way for the server (container.ts) and for the operator's
// verbs of `bin/matte` (cli/operator.ts), which run beside a live server on the same database. A module of
// its own so that the command line loads no model, image or storage code.
import type { Config } from './config.ts';
import { createDatabase } from './db/database.ts';
import { Store } from './db/store.ts';
import { MAX_PHOTOS_PER_BATCH } from './domain/batch-rules.ts';
import { OperatorApprovalProvider } from './adapters/payments/operator-approval.adapter.ts';
import { CreditsService } from './services/credits.service.ts';
import { AccountService, accountTerms } from './services/account.service.ts';
import { LicenseService } from './services/license.service.ts';
import { PurchaseService } from './services/purchase.service.ts';

export interface AccountServices {
  credits: CreditsService;
  accounts: AccountService;
  licenses: LicenseService;
  purchases: PurchaseService;
}

export function accountServices(config: Readonly<Config>, store: Store, clock: () => number): AccountServices {
  const credits = new CreditsService();
  return {
    credits,
    accounts: new AccountService({ store, credits, clock, ...accountTerms(config) }),
    licenses: new LicenseService({ store, credits, clock, maxPhotosPerBatch: MAX_PHOTOS_PER_BATCH }),
    purchases: new PurchaseService({ store, credits, clock, provider: new OperatorApprovalProvider() }),
  };
}

/** The database and the account services, for a command that runs once and closes the store. */
export async function openAccountServices(
  config: Readonly<Config>,
  clock: () => number = Date.now,
): Promise<AccountServices & { store: Store; clock: () => number }> {
  const store = new Store(await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  return { store, clock, ...accountServices(config, store, clock) };
}
