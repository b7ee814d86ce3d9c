// The port every payment provider implements; PurchaseService is its one caller.
/** What a payment provider does: take a pending purchase and say whether it is paid already. */
export interface PaymentProvider {
  readonly name: string;
  /** Starts the payment. `paid` purchases complete at once; `pending` ones wait for complete(). */
  begin(purchase: {
    id: string;
    accountId: string;
    packId: string;
    credits: number;
  }): Promise<{ state: 'pending' | 'paid'; reference: string | null; instructions: string }>;
}
