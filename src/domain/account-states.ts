// The closed lists of an account's credits, purchases and licence: one source for the API's schemas, the
// database's row types and the services that move them.

/** The two credit pools, in the order credits are spent: the plan's monthly credits first, then packs. */
export const CREDIT_POOLS = ['plan', 'pack'] as const;
export type CreditPool = (typeof CREDIT_POOLS)[number];

/** What a ledger row records. */
export const LEDGER_KINDS = [
  'reserve',
  'commit',
  'release',
  'claim',
  'grant',
  'purchase',
  'welcome',
  'refresh',
  'expire',
  'adjust',
] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

export const PURCHASE_STATUSES = ['pending', 'completed', 'cancelled'] as const;
export type PurchaseStatus = (typeof PURCHASE_STATUSES)[number];

export const LICENSE_STATUSES = ['purchased', 'active', 'deactivated', 'refunded'] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];
